import ts from 'typescript';

// yoke's promise rules, beside typescript-eslint's no-floating-promises and
// no-misused-promises: the misuses those two let through, each of which has
// cost us a bug (the store is asynchronous on both engines, so a store call
// left unawaited runs out of order on PostgreSQL).

/** Whether a type is a promise (a union holding one counts). */
function isPromise(checker, type) {
  if (type.isUnion()) return type.types.some((t) => isPromise(checker, t));
  const name = type.getSymbol()?.getName();
  return name === 'Promise' || (name !== undefined && name !== 'Thenable' && /Promise/.test(name) && checker.getPropertyOfType(type, 'then') !== undefined);
}

/** A promise that may be absent (`Promise | null`) is a fair thing to test for. */
const maybeAbsent = (type) => type.isUnion() && type.types.some((u) => (u.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined | ts.TypeFlags.Void)) !== 0);

function typed(context) {
  const services = context.sourceCode.parserServices;
  const checker = services.program.getTypeChecker();
  const typeOf = (node) => services.getTypeAtLocation(node);
  const promise = (node) => isPromise(checker, typeOf(node));
  const asyncFn = (node) =>
    (node.type === 'ArrowFunctionExpression' || node.type === 'FunctionExpression') &&
    (node.async || isPromise(checker, checker.getSignatureFromDeclaration(services.esTreeNodeToTSNodeMap.get(node)).getReturnType()));
  return { services, checker, typeOf, promise, asyncFn };
}

const rule = (description, message, create) => ({ meta: { type: 'problem', docs: { description }, messages: { found: message }, schema: [] }, create });

const promiseValue = rule(
  'A promise is never nullish and never equal to what it will hold.',
  'A promise used as a value it will only hold: {{what}}. Await it first.',
  (context) => {
    const t = typed(context);
    const equality = new Set(['===', '!==', '==', '!=']);
    return {
      LogicalExpression(node) {
        if (node.operator === '??' && t.promise(node.left) && !maybeAbsent(t.typeOf(node.left))) context.report({ node: node.left, messageId: 'found', data: { what: 'the left of ??' } });
      },
      BinaryExpression(node) {
        if (!equality.has(node.operator)) return;
        const [l, r] = [t.promise(node.left), t.promise(node.right)];
        if (l !== r) context.report({ node: l ? node.left : node.right, messageId: 'found', data: { what: `compared with ${node.operator}` } });
      },
    };
  },
);

const promiseAsAny = rule(
  'A promise handed to a parameter that takes anything is kept or sent as a promise (JSON of it is {}).',
  'A promise passed where any value is taken: it is kept or sent as a promise. Await it first.',
  (context) => {
    const t = typed(context);
    return {
      CallExpression(node) {
        if (node.callee.type === 'Identifier' && node.callee.name === 'expect') return;
        const sig = t.checker.getResolvedSignature(t.services.esTreeNodeToTSNodeMap.get(node));
        if (!sig) return;
        node.arguments.forEach((arg, i) => {
          const param = sig.parameters[Math.min(i, sig.parameters.length - 1)];
          if (!param) return;
          const type = t.checker.getTypeOfSymbolAtLocation(param, t.services.esTreeNodeToTSNodeMap.get(node));
          if ((type.flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Any)) !== 0 && t.promise(arg)) context.report({ node: arg, messageId: 'found' });
        });
      },
    };
  },
);

const expectPromise = rule(
  'expect(promise) compares the promise, and expect(async () => …).toThrow() never sees the throw.',
  'expect() of a promise or an async function: use `await expect(…).resolves` or `.rejects`.',
  (context) => {
    const t = typed(context);
    return {
      CallExpression(node) {
        if (node.callee.type !== 'Identifier' || node.callee.name !== 'expect' || !node.arguments[0]) return;
        const parent = node.parent;
        const unwrapped = parent.type === 'MemberExpression' && parent.object === node && parent.property.type === 'Identifier' && ['resolves', 'rejects'].includes(parent.property.name);
        const arg = node.arguments[0];
        if (!unwrapped && (t.asyncFn(arg) || t.promise(arg))) context.report({ node: arg, messageId: 'found' });
      },
    };
  },
);

const storeCallVoided = rule(
  'A store call marked `void` is a write nobody waits for: on PostgreSQL it may land after what follows it.',
  'A store call voided: await it.',
  (context) => {
    const t = typed(context);
    return {
      UnaryExpression(node) {
        if (node.operator !== 'void' || node.argument.type !== 'CallExpression') return;
        const decl = t.checker.getResolvedSignature(t.services.esTreeNodeToTSNodeMap.get(node.argument))?.getDeclaration();
        const file = decl?.getSourceFile().fileName ?? '';
        if (/\/src\/store\/.+\.ts$/.test(file) && t.promise(node.argument)) context.report({ node, messageId: 'found' });
      },
    };
  },
);

export default {
  meta: { name: 'yoke-promises' },
  rules: { 'promise-value': promiseValue, 'promise-as-any': promiseAsAny, 'expect-promise': expectPromise, 'store-call-voided': storeCallVoided },
};
