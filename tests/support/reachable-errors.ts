import path from 'node:path';
import ts from 'typescript';

// The error codes a route's code can throw, found by reading it (issue 30): from the route's
// `handle`, `authorize` and `resource`, every function they call (followed through imports, across
// lib/), every `new ApiError(<status>, '<code>')` and every helper call (`badRequest('x')`,
// `forbidden('x')`, `conflict('x')`, `notFound()`, ...) whose code is a literal, a constant or a
// union of literals. A code built at run time (a template, a table lookup) is not found here: the
// routes declare those by hand, and the contract test holds them against the traffic. Calls
// through an interface (the directory port, the cluster CLI) are not followed either: the routes
// declare those outside systems' codes through shared sets (lib/api/*/errors.ts).

const HELPERS: Record<string, number> = { badRequest: 400, unauthorized: 401, forbidden: 403, notFound: 404, conflict: 409, tooMany: 429, unavailable: 503 };

export interface RouteErrors {
  app: 'console' | 'fleet';
  method: string;
  path: string;
  /** status → codes */
  errors: Record<number, string[]>;
}

export function reachableErrors(root: string, files: string[]): RouteErrors[] {
  const cfg = ts.getParsedCommandLineOfConfigFile(path.join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined })!;
  const roots = files.map((f) => path.join(root, f));
  const program = ts.createProgram(roots, { ...cfg.options, noEmit: true });
  const checker = program.getTypeChecker();
  const inProject = (n: ts.Node) => {
    const f = n.getSourceFile().fileName;
    return f.startsWith(root) && !f.includes('node_modules');
  };

  const literals = (e: ts.Expression): string[] | undefined => {
    if (ts.isStringLiteralLike(e)) return [e.text];
    if (ts.isTemplateExpression(e)) {
      // `/api/users/{id}/${verb}` with verb a union of literals: each of them
      let out = [e.head.text];
      for (const span of e.templateSpans) {
        const values = literals(span.expression);
        if (!values) return undefined;
        out = out.flatMap((o) => values.map((v) => o + v + span.literal.text));
      }
      return out;
    }
    if (ts.isParenthesizedExpression(e)) return literals(e.expression);
    if (ts.isConditionalExpression(e)) {
      const a = literals(e.whenTrue);
      const b = literals(e.whenFalse);
      return a && b ? [...a, ...b] : undefined;
    }
    const t = checker.getTypeAtLocation(e);
    const parts = t.isUnion() ? t.types : [t];
    return parts.every((x) => x.isStringLiteral()) ? parts.map((x) => (x as ts.StringLiteralType).value) : undefined;
  };

  const bodies = (sym: ts.Symbol | undefined): ts.Node[] => {
    if (!sym) return [];
    if (sym.flags & ts.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
    const out: ts.Node[] = [];
    for (const d of sym.declarations ?? []) {
      if (!inProject(d)) continue;
      if ((ts.isFunctionDeclaration(d) || ts.isMethodDeclaration(d)) && d.body) out.push(d);
      else if (ts.isVariableDeclaration(d) && d.initializer && (ts.isArrowFunction(d.initializer) || ts.isFunctionExpression(d.initializer) || ts.isCallExpression(d.initializer))) out.push(d.initializer);
      else if (ts.isPropertyAssignment(d) && (ts.isArrowFunction(d.initializer) || ts.isFunctionExpression(d.initializer))) out.push(d.initializer);
      else if (ts.isShorthandPropertyAssignment(d)) out.push(...bodies(checker.getShorthandAssignmentValueSymbol(d)));
      else if (ts.isClassDeclaration(d)) {
        const c = d.members.find(ts.isConstructorDeclaration);
        if (c) out.push(c);
      }
    }
    return out;
  };

  const analyse = (start: ts.Node[]) => {
    const errors: Record<number, Set<string>> = {};
    const add = (status: number, codes: string[]) => codes.forEach((c) => (errors[status] ??= new Set()).add(c));
    const seen = new Set<ts.Node>();
    const queue = [...start];
    while (queue.length) {
      const fn = queue.shift()!;
      if (seen.has(fn)) continue;
      seen.add(fn);
      const visit = (n: ts.Node) => {
        if (ts.isCallExpression(n) || ts.isNewExpression(n)) {
          const callee = n.expression;
          const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : '';
          const args = n.arguments ?? ts.factory.createNodeArray();
          if (ts.isNewExpression(n) && name === 'ApiError') {
            const status = args[0] && ts.isNumericLiteral(args[0]) ? Number(args[0].text) : undefined;
            const codes = args[1] ? literals(args[1]) : undefined;
            if (status && codes) add(status, codes);
          } else if (ts.isCallExpression(n) && HELPERS[name] && ts.isIdentifier(callee)) {
            const codes = !args.length ? [name === 'notFound' ? 'not_found' : 'unauthenticated'] : name === 'notFound' ? ['not_found'] : literals(args[0]);
            if (codes) add(HELPERS[name], codes);
          } else {
            queue.push(...bodies(checker.getSymbolAtLocation(ts.isPropertyAccessExpression(callee) ? callee.name : callee)));
          }
          // functions handed to others (callbacks) run too
          for (const a of args) if (ts.isIdentifier(a)) queue.push(...bodies(checker.getSymbolAtLocation(a)));
        }
        ts.forEachChild(n, visit);
      };
      visit(fn);
    }
    return Object.fromEntries(Object.entries(errors).map(([s, c]) => [Number(s), [...c].sort()]));
  };

  const out: RouteErrors[] = [];
  for (const sf of program.getSourceFiles()) {
    if (!roots.includes(sf.fileName)) continue;
    const app = sf.fileName.includes(`${path.sep}fleet${path.sep}`) ? 'fleet' : 'console';
    const visit = (n: ts.Node) => {
      if (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && /^define(Fleet)?Route$/.test(n.expression.text) && n.arguments[0] && ts.isObjectLiteralExpression(n.arguments[0])) {
        const obj = n.arguments[0];
        const prop = (k: string) => obj.properties.find((p) => p.name && ts.isIdentifier(p.name) && p.name.text === k);
        const text = (k: string) => {
          const p = prop(k);
          return p && ts.isPropertyAssignment(p) ? p.initializer : undefined;
        };
        const start: ts.Node[] = [];
        for (const k of ['handle', 'authorize', 'resource']) {
          const p = prop(k);
          if (!p) continue;
          if (ts.isMethodDeclaration(p)) start.push(p);
          else if (ts.isPropertyAssignment(p)) start.push(...(ts.isIdentifier(p.initializer) || ts.isPropertyAccessExpression(p.initializer) ? bodies(checker.getSymbolAtLocation(p.initializer)) : [p.initializer]));
        }
        // a spread of shared route fields (a resolver)
        for (const p of obj.properties) {
          if (!ts.isSpreadAssignment(p)) continue;
          const d = checker.getSymbolAtLocation(p.expression)?.valueDeclaration;
          if (d && ts.isVariableDeclaration(d) && d.initializer && ts.isObjectLiteralExpression(d.initializer)) {
            for (const q of d.initializer.properties) if (q.name && ts.isIdentifier(q.name) && q.name.text === 'resource' && ts.isPropertyAssignment(q)) start.push(...bodies(checker.getSymbolAtLocation(q.initializer)));
          }
        }
        const method = text('method');
        const routePath = text('path');
        const paths = routePath && ts.isStringLiteralLike(routePath) ? [routePath.text] : routePath ? (literals(routePath as ts.Expression) ?? []) : [];
        const errors = analyse(start);
        for (const p of paths) if (method && ts.isStringLiteralLike(method)) out.push({ app, method: method.text, path: p, errors });
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return out;
}
