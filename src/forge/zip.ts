import { inflateRawSync } from 'node:zlib';

// Reads the files of a zip archive (a workflow artifact, as GitHub serves it
// for download): the central directory, then each entry stored or deflated.
// Sizes are bounded: an artifact is data a run wrote, never trusted to be small.

export class ZipError extends Error {}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

/** The files of a zip archive, by name; refuses an archive or entry larger than `maxBytes`. */
export function readZip(data: Uint8Array, maxBytes: number): Map<string, Buffer> {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  let end = -1;
  // The end record sits in the last 22 bytes plus a comment of at most 65535.
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 65_535); i--)
    if (buf.readUInt32LE(i) === EOCD) {
      end = i;
      break;
    }
  if (end < 0) throw new ZipError('not a zip archive (no end of central directory)');
  const count = buf.readUInt16LE(end + 10);
  let at = buf.readUInt32LE(end + 16);
  const files = new Map<string, Buffer>();
  let total = 0;
  for (let n = 0; n < count; n++) {
    if (at + 46 > buf.length || buf.readUInt32LE(at) !== CENTRAL)
      throw new ZipError('a central directory entry is damaged');
    const method = buf.readUInt16LE(at + 10);
    const compressed = buf.readUInt32LE(at + 20);
    const size = buf.readUInt32LE(at + 24);
    const nameLen = buf.readUInt16LE(at + 28);
    const extraLen = buf.readUInt16LE(at + 30);
    const commentLen = buf.readUInt16LE(at + 32);
    const local = buf.readUInt32LE(at + 42);
    const name = buf.toString('utf8', at + 46, at + 46 + nameLen);
    at += 46 + nameLen + extraLen + commentLen;
    if (name.endsWith('/')) continue;
    // TR32: one name, one file. An archive that names a file twice is read as neither (a reader that took the first, and one that took the last, would disagree).
    if (files.has(name)) throw new ZipError(`${name} is in the archive twice`);
    total += size;
    if (size > maxBytes || total > maxBytes) throw new ZipError(`the archive holds more than ${maxBytes} bytes`);
    if (local + 30 > buf.length || buf.readUInt32LE(local) !== LOCAL)
      throw new ZipError(`${name}: its local header is damaged`);
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const raw = buf.subarray(start, start + compressed);
    if (raw.length !== compressed) throw new ZipError(`${name}: cut short`);
    let body: Buffer;
    if (method === 0) body = Buffer.from(raw);
    else if (method === 8) body = inflateRawSync(raw, { maxOutputLength: maxBytes });
    else throw new ZipError(`${name}: compression method ${method} is not read`);
    if (body.length !== size) throw new ZipError(`${name}: ${body.length} bytes, the directory says ${size}`);
    files.set(name, body);
  }
  return files;
}
