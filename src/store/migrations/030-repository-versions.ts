import type { Migration } from './migration.js';

// SC10: what the pass reads of each repository from the store (its row, runs, claims, AFK labels and asks) carries
// a version, moved by the database itself on every write to any of them, in the writing transaction, whichever
// process or command wrote. A pass that finds a repository's version where it left it reads none of its rows.
const TABLE = `
CREATE TABLE repo_versions (
  full_name TEXT PRIMARY KEY,
  version INTEGER NOT NULL
);
`;

export const migration: Migration = {
  version: 30,
  name: 'repository versions',
  sql: `${TABLE}
CREATE TRIGGER repos_changed_insert AFTER INSERT ON repos FOR EACH ROW BEGIN
  INSERT INTO repo_versions (full_name, version) VALUES (NEW.full_name, 1)
    ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;
END;
CREATE TRIGGER repos_changed_update AFTER UPDATE ON repos FOR EACH ROW BEGIN
  INSERT INTO repo_versions (full_name, version) VALUES (NEW.full_name, 1)
    ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;
  INSERT INTO repo_versions (full_name, version) SELECT OLD.full_name, 1 WHERE OLD.full_name IS NOT NEW.full_name
    ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;
END;
CREATE TRIGGER repos_changed_delete AFTER DELETE ON repos FOR EACH ROW BEGIN
  INSERT INTO repo_versions (full_name, version) VALUES (OLD.full_name, 1)
    ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;
END;
CREATE TRIGGER runs_changed_insert AFTER INSERT ON runs FOR EACH ROW BEGIN
  INSERT INTO repo_versions (full_name, version) VALUES (NEW.repo, 1)
    ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;
END;
CREATE TRIGGER runs_changed_update AFTER UPDATE ON runs FOR EACH ROW BEGIN
  INSERT INTO repo_versions (full_name, version) VALUES (NEW.repo, 1)
    ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;
  INSERT INTO repo_versions (full_name, version) SELECT OLD.repo, 1 WHERE OLD.repo IS NOT NEW.repo
    ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;
END;
CREATE TRIGGER runs_changed_delete AFTER DELETE ON runs FOR EACH ROW BEGIN
  INSERT INTO repo_versions (full_name, version) VALUES (OLD.repo, 1)
    ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;
END;
CREATE TRIGGER claims_changed_insert AFTER INSERT ON claims FOR EACH ROW BEGIN
  INSERT INTO repo_versions (full_name, version) VALUES (NEW.repo, 1)
    ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;
END;
CREATE TRIGGER claims_changed_update AFTER UPDATE ON claims FOR EACH ROW BEGIN
  INSERT INTO repo_versions (full_name, version) VALUES (NEW.repo, 1)
    ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;
  INSERT INTO repo_versions (full_name, version) SELECT OLD.repo, 1 WHERE OLD.repo IS NOT NEW.repo
    ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;
END;
CREATE TRIGGER claims_changed_delete AFTER DELETE ON claims FOR EACH ROW BEGIN
  INSERT INTO repo_versions (full_name, version) VALUES (OLD.repo, 1)
    ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;
END;
CREATE TRIGGER afk_labels_changed_insert AFTER INSERT ON afk_labels FOR EACH ROW BEGIN
  INSERT INTO repo_versions (full_name, version) VALUES (NEW.repo, 1)
    ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;
END;
CREATE TRIGGER afk_labels_changed_update AFTER UPDATE ON afk_labels FOR EACH ROW BEGIN
  INSERT INTO repo_versions (full_name, version) VALUES (NEW.repo, 1)
    ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;
  INSERT INTO repo_versions (full_name, version) SELECT OLD.repo, 1 WHERE OLD.repo IS NOT NEW.repo
    ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;
END;
CREATE TRIGGER afk_labels_changed_delete AFTER DELETE ON afk_labels FOR EACH ROW BEGIN
  INSERT INTO repo_versions (full_name, version) VALUES (OLD.repo, 1)
    ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;
END;
CREATE TRIGGER asks_changed_insert AFTER INSERT ON asks FOR EACH ROW BEGIN
  INSERT INTO repo_versions (full_name, version) VALUES (NEW.repo, 1)
    ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;
END;
CREATE TRIGGER asks_changed_update AFTER UPDATE ON asks FOR EACH ROW BEGIN
  INSERT INTO repo_versions (full_name, version) VALUES (NEW.repo, 1)
    ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;
  INSERT INTO repo_versions (full_name, version) SELECT OLD.repo, 1 WHERE OLD.repo IS NOT NEW.repo
    ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;
END;
CREATE TRIGGER asks_changed_delete AFTER DELETE ON asks FOR EACH ROW BEGIN
  INSERT INTO repo_versions (full_name, version) VALUES (OLD.repo, 1)
    ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;
END;
`,
  postgres: `${TABLE.replace('INTEGER', 'BIGINT')}
-- One function for every table: TG_ARGV[0] names the column that holds the repository's name.
CREATE FUNCTION yoke_repo_changed() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  was TEXT := CASE WHEN TG_OP = 'INSERT' THEN NULL ELSE to_jsonb(OLD) ->> TG_ARGV[0] END;
  now_named TEXT := CASE WHEN TG_OP = 'DELETE' THEN NULL ELSE to_jsonb(NEW) ->> TG_ARGV[0] END;
BEGIN
  IF now_named IS NOT NULL THEN
    INSERT INTO repo_versions (full_name, version) VALUES (now_named, 1)
      ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;
  END IF;
  IF was IS NOT NULL AND was IS DISTINCT FROM now_named THEN
    INSERT INTO repo_versions (full_name, version) VALUES (was, 1)
      ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;
  END IF;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER repos_changed AFTER INSERT OR UPDATE OR DELETE ON repos
  FOR EACH ROW EXECUTE FUNCTION yoke_repo_changed('full_name');
CREATE TRIGGER runs_changed AFTER INSERT OR UPDATE OR DELETE ON runs
  FOR EACH ROW EXECUTE FUNCTION yoke_repo_changed('repo');
CREATE TRIGGER claims_changed AFTER INSERT OR UPDATE OR DELETE ON claims
  FOR EACH ROW EXECUTE FUNCTION yoke_repo_changed('repo');
CREATE TRIGGER afk_labels_changed AFTER INSERT OR UPDATE OR DELETE ON afk_labels
  FOR EACH ROW EXECUTE FUNCTION yoke_repo_changed('repo');
CREATE TRIGGER asks_changed AFTER INSERT OR UPDATE OR DELETE ON asks
  FOR EACH ROW EXECUTE FUNCTION yoke_repo_changed('repo');
`,
};
