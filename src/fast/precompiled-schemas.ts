// The routes' validators and serializers generated when the service is built, not compiled at
// every start (the speed path precompiled-schemas; Fastify's standalone mode:
// @fastify/ajv-compiler and @fastify/fast-json-stringify-compiler). Compiling them was a third
// of the CPU a start took: of a start's 795 ms of samples, 124 ms compiling the serializers and
// 74 ms the validators (docs/benchmarks-changes.md, "Footprint: one bundle, and the heap sized";
// the compilers then left out of the bundle: "Startup: the API reference and the schema
// compilers on first use").
//
// Stands in for Fastify compiling each route's schemas at startup (the plain buildApp gives no
// schemaController), through FastPaths.schemaCompilers (src/seams.ts), which buildApp hands to
// Fastify's `schemaController.compilersFactory`.
//
// `npm run build` builds the app once with `recordingCompilers` (scripts/precompile-schemas.ts),
// which compile as Fastify does and keep each function's generated code, and writes that code
// beside the bundle as dist/compiled-schemas.cjs, whatever FAST_PATHS says. The built service
// then takes each route's functions from that file (`precompiledCompilers`). Only the built
// service: from the sources (`npm run dev`, the tests in process) there is no such file beside
// the code, and Fastify compiles at startup, so nothing run from src/ depends on a build. Each
// function is filed under its route and a digest of its schema, the shared schemas and the
// compiler's options: a schema the file lacks, or that changed since, is compiled at startup as
// Fastify otherwise would.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { ValidatorFactory } from '@fastify/ajv-compiler';
import type { SerializerFactory } from '@fastify/fast-json-stringify-compiler';
import type { SchemaCompilers } from '../seams.js';

/** Fastify's `schemaController.compilersFactory` (FastPaths.schemaCompilers), as this module makes it. */
export interface PrecompiledCompilers extends SchemaCompilers {
  buildValidator: ValidatorFactory;
  buildSerializer: SerializerFactory;
  /** With precompiled functions: the route parts compiled at startup because the file lacked them. */
  compiledAtStartup?: string[];
}
type CompiledFunction = (...args: never[]) => unknown;

// Fastify's compilers, with Ajv and fast-json-stringify's code generator, are required from
// node_modules only when a function must be compiled (the build, a schema the file lacks): the
// bundle leaves them out (scripts/build.mjs), and a process serving the build never loads them.
const requireFromHere = createRequire(import.meta.url);
const ajvCompiler = () => requireFromHere('@fastify/ajv-compiler') as typeof import('@fastify/ajv-compiler');
const serializerCompiler = () =>
  requireFromHere('@fastify/fast-json-stringify-compiler') as typeof import('@fastify/fast-json-stringify-compiler');

/** The file `npm run build` writes beside the bundle. */
export const COMPILED_SCHEMAS_FILE = 'compiled-schemas.cjs';

/** What Fastify says of the schema it wants compiled. */
interface CompileRoute {
  method: string;
  url: string;
  httpPart?: string;
  httpStatus?: string;
  contentType?: string;
  schema?: unknown;
}

/** What every function a factory makes depends on beyond its own schema. */
function contextDigest(externalSchemas: unknown, options: unknown): string {
  return createHash('sha256').update(JSON.stringify([externalSchemas, options]) ?? '').digest('base64url');
}

/**
 * One route part's function: its method, URL and the part (body, params…) or status it is
 * for, and a digest of everything its code was generated from.
 */
export function compiledKey(context: string, { method, url, httpPart, httpStatus, contentType, schema }: CompileRoute): string {
  const digest = createHash('sha256').update(context).update(JSON.stringify(schema) ?? '').digest('base64url').slice(0, 22);
  return [method, url, httpPart ?? `status ${httpStatus}`, contentType ?? '-', digest].join(' ');
}

export interface GeneratedCode {
  validators: Map<string, string>;
  serializers: Map<string, string>;
}

/** The build's compilers: Fastify's own, keeping the code of each function they make. */
export function recordingCompilers(code: GeneratedCode): PrecompiledCompilers {
  return {
    buildValidator: recording(code.validators, (store) => ajvCompiler().StandaloneValidator({ readMode: false, storeFunction: store })) as unknown as ValidatorFactory,
    // Validators inlined: a response schema with anyOf (the 401s) otherwise makes the serializer
    // load Ajv and compile it at startup, which is what this module saves.
    buildSerializer: recording(code.serializers, (store) => serializerCompiler().StandaloneSerializer({ readMode: false, storeFunction: store }), { inlineValidators: true }) as unknown as SerializerFactory,
  };
}

type Store = (route: CompileRoute, source: string) => void;
type Factory = (externalSchemas: unknown, options: unknown) => (route: CompileRoute) => unknown;

/** A standalone (write mode) factory whose code is filed under `compiledKey`. */
function recording(sources: Map<string, string>, standalone: (store: Store) => unknown, generationOptions: object = {}): Factory {
  return (externalSchemas, options) => {
    const context = contextDigest(externalSchemas, options);
    const factory = standalone((route, source) => void sources.set(compiledKey(context, route), source)) as Factory;
    // A copy: the standalone factory adds its code-generation option to the object it is given,
    // and Fastify gives the same one to every plugin context's factory.
    return factory(externalSchemas, { ...(options as object), ...generationOptions });
  };
}

/**
 * dist/compiled-schemas.cjs as a CommonJS module: each generated module in a scope of its own,
 * written once however many route parts share its code (the same error envelope answers many
 * routes: half the serializers), so the file parsed at startup is a third smaller.
 */
export function compiledSchemasModule(code: GeneratedCode): string {
  const modules: string[] = [];
  const moduleOf = new Map<string, number>();
  const entries = (functions: Map<string, string>) =>
    [...functions]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([key, source]) => {
        let index = moduleOf.get(source);
        if (index === undefined) {
          index = modules.push(`const m${modules.length} = (() => {\n  const module = { exports: {} };\n  const exports = module.exports;\n${source}\n  return module.exports;\n})();`) - 1;
          moduleOf.set(source, index);
        }
        return `  [${JSON.stringify(key)}, m${index}],`;
      })
      .join('\n');
  const validators = entries(code.validators);
  const serializers = entries(code.serializers);
  return [
    "'use strict';",
    '// Generated by `npm run build` (scripts/precompile-schemas.ts, src/fast/precompiled-schemas.ts): do not edit.',
    ...modules,
    `exports.validators = new Map([\n${validators}\n]);`,
    `exports.serializers = new Map([\n${serializers}\n]);`,
    '',
  ].join('\n');
}

/**
 * Each function from dist/compiled-schemas.cjs when it is there for that schema, else Fastify's
 * own compiler (made on first use). Looked for beside this code only: the built service runs
 * from dist/, where the build wrote it. Undefined when there is no such file (run from src/).
 */
export function precompiledCompilers(file: string | undefined = builtFile()): PrecompiledCompilers | undefined {
  if (file === undefined) return undefined;
  const compiled = requireFromHere(file) as { validators: Map<string, CompiledFunction>; serializers: Map<string, CompiledFunction> };

  const compiledAtStartup: string[] = [];
  return {
    buildValidator: fromFileOr(compiled.validators, () => ajvCompiler().default(), compiledAtStartup) as unknown as ValidatorFactory,
    buildSerializer: fromFileOr(compiled.serializers, () => serializerCompiler().SerializerSelector(), compiledAtStartup) as unknown as SerializerFactory,
    compiledAtStartup,
  };
}

function builtFile(): string | undefined {
  const beside = fileURLToPath(new URL(COMPILED_SCHEMAS_FILE, import.meta.url));
  return existsSync(beside) ? beside : undefined;
}

/** A compilers factory (Fastify's signature) taking each function from `functions`, else from `fallback`. */
function fromFileOr(functions: Map<string, CompiledFunction>, fallback: () => unknown, misses: string[]): Factory {
  let makeCompiler: Factory | undefined;
  return (externalSchemas, options) => {
    const context = contextDigest(externalSchemas, options);
    let compile: ReturnType<Factory> | undefined;
    return (route) => {
      const key = compiledKey(context, route);
      const found = functions.get(key);
      if (found) return found;
      misses.push(key);
      makeCompiler ??= fallback() as Factory;
      return (compile ??= makeCompiler(externalSchemas, options))(route);
    };
  };
}
