import { globalRegistry } from 'zod';

/**
 * A schema built on first use (issue 26, docs/decisions/speed-daemon.md "Lazy route schemas"):
 * building every route's zod schemas at import cost the daemon and the CLI ~100-300 ms and
 * ~10 MiB at each start, for routes most processes never call. The value stands for the schema
 * it builds, with the same type: any property read, `in`, key listing or `instanceof` builds it
 * once and forwards to it, so importers (the router's validation, the CLI, the OpenAPI document)
 * use it as they used the eager schema.
 */
export function lazySchema<T extends object>(build: () => T): T {
  let built: T | undefined;
  const schema = (): T => {
    if (built === undefined) {
      built = build();
      // toJSONSchema reads descriptions from the global registry by object identity: the
      // schema is referenced through this stand-in, so the stand-in carries them too.
      const meta = globalRegistry.get(built as never);
      if (meta) globalRegistry.add(standIn as never, meta as never);
      builtOf.set(standIn, built);
    }
    return built;
  };
  const standIn: T = new Proxy({} as T, {
    get: (_, key) => Reflect.get(schema(), key),
    set: (_, key, value) => Reflect.set(schema(), key, value),
    has: (_, key) => Reflect.has(schema(), key),
    ownKeys: () => Reflect.ownKeys(schema()),
    // Reported configurable: the stand-in's own (empty) target must not contradict it.
    getOwnPropertyDescriptor: (_, key) => {
      const d = Reflect.getOwnPropertyDescriptor(schema(), key);
      return d && { ...d, configurable: true };
    },
    defineProperty: (_, key, d) => Reflect.defineProperty(schema(), key, d),
    deleteProperty: (_, key) => Reflect.deleteProperty(schema(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(schema()),
  });
  standIns.add(standIn);
  return standIn;
}

const standIns = new WeakSet<object>();
const builtOf = new WeakMap<object, object>();

/**
 * The schema a stand-in stands for (built now if it was not), or the value itself. zod's
 * JSON Schema conversion keys what it has seen by object identity, and a schema's own methods
 * refer to it, never to its stand-in: openapi.ts looks schemas up by what this returns.
 */
export function builtSchema<T>(value: T): T {
  if (typeof value !== 'object' || value === null || !standIns.has(value)) return value;
  void (value as { _zod?: unknown })._zod;
  return builtOf.get(value) as T;
}
