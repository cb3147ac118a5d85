import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { check, removeDir, versionDir } from './runtime-helpers.js';

/**
 * The build step (--check) derives each tool's input schema and description from its signature
 * and docstring (FastMCP style) and writes the MCP tool list to .platform/manifest.json.
 */
const SIGNATURES = `
import dataclasses
import enum
from typing import Annotated, Any, Literal, Optional, Sequence, Mapping, TypedDict, Union
from platform_mcp import tool

class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"

@tool
def scalars(s: str, i: int, f: float, b: bool):
    """Every scalar."""

@tool
def containers(xs: list[int], bare: list, d: dict, ds: dict[str, float], t: tuple[int, str], many: tuple[str, ...], tags: set[str]):
    """Containers."""

@tool
def optionals(a: Optional[int], b: int | None = None, c: Union[str, int] = "x", d: str | None = "hi"):
    """Optionals."""

@tool
def literals(mode: Literal["fast", "slow"], level: Literal[1, 2, 3] = 1, color: Color = Color.RED):
    pass

@tool
def untyped(a, b=3, c: Any = None, *args, credentials=None, **kwargs):
    pass

@tool
def documented(city: str, days: int = 3, units: Annotated[str, "metric or imperial"] = "metric"):
    """Forecast for a city.

    Looks the city up first; this second paragraph is not part of the description.

    Args:
        city (str): the city's name,
            as people write it
        days: how many days
            ahead, at most 7

    Returns:
        a forecast
    """

class Point(TypedDict, total=False):
    x: float
    label: str

class Box(TypedDict):
    corner: Point
    size: int

@tool
def abstract(seq: Sequence[int], m: Mapping[str, bool], plain: Optional[Sequence[str]] = None):
    pass

@tool
def typed_dicts(box: Box, extra: dict[str, Point] | None = None):
    pass

@dataclasses.dataclass
class Place:
    city: str
    size: Color = Color.RED
    tags: list[str] = dataclasses.field(default_factory=list)

@tool
def dataclass_args(place: Place, other: Optional[Place] = None):
    pass

@tool(name="renamed", description="Explicit description wins.")
def original(q: str):
    """Docstring that loses."""
`;

let dir: string;
let tools: Record<string, { description: string | null; inputSchema: any; module: string }>;
beforeAll(async () => {
  dir = await versionDir({
    sigs: SIGNATURES,
    single: `from platform_mcp import tool\n\n@tool\ndef whatever_name(x: int):\n    """Single tool takes the module name."""\n    return x\n`,
    bare: `@tool\ndef bare(x: str):\n    return x\n`,
    explicit: {
      source: `from platform_mcp import tool\n\n@tool(description="from the decorator")\ndef explicit(x: int):\n    """From the docstring."""\n`,
      description: 'From the publish body',
      schema: { type: 'object', properties: { y: { type: 'string' } }, required: ['y'] },
    },
  });
  const r = await check(dir);
  expect(r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
  tools = Object.fromEntries(r.manifest!.tools.map((t) => [t.name, t]));
});
afterAll(() => removeDir(dir));

describe('schema derivation', () => {
  it('lists every decorated function in order, one module exposing one tool under its module name', () => {
    expect(Object.keys(tools)).toEqual(['bare', 'explicit', 'scalars', 'containers', 'optionals', 'literals', 'untyped', 'documented', 'abstract', 'typed_dicts', 'dataclass_args', 'renamed', 'single']);
    expect(tools.single).toMatchObject({ module: 'single', description: 'Single tool takes the module name.' });
    expect(tools.bare.inputSchema).toEqual({ type: 'object', properties: { x: { type: 'string' } }, required: ['x'] });
  });

  it.each([
    ['scalars', { s: { type: 'string' }, i: { type: 'integer' }, f: { type: 'number' }, b: { type: 'boolean' } }, ['s', 'i', 'f', 'b']],
    [
      'containers',
      {
        xs: { type: 'array', items: { type: 'integer' } },
        bare: { type: 'array' },
        d: { type: 'object' },
        ds: { type: 'object', additionalProperties: { type: 'number' } },
        t: { type: 'array', prefixItems: [{ type: 'integer' }, { type: 'string' }], minItems: 2, maxItems: 2 },
        many: { type: 'array', items: { type: 'string' } },
        tags: { type: 'array', items: { type: 'string' }, uniqueItems: true },
      },
      ['xs', 'bare', 'd', 'ds', 't', 'many', 'tags'],
    ],
    [
      'optionals',
      {
        a: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
        b: { anyOf: [{ type: 'integer' }, { type: 'null' }], default: null },
        c: { anyOf: [{ type: 'string' }, { type: 'integer' }], default: 'x' },
        d: { anyOf: [{ type: 'string' }, { type: 'null' }], default: 'hi' },
      },
      ['a'],
    ],
    [
      'literals',
      { mode: { type: 'string', enum: ['fast', 'slow'] }, level: { type: 'integer', enum: [1, 2, 3], default: 1 }, color: { enum: ['red', 'blue'], default: 'red' } },
      ['mode'],
    ],
    ['untyped', { a: {}, b: { default: 3 }, c: { default: null } }, ['a']],
    [
      'abstract',
      {
        seq: { type: 'array', items: { type: 'integer' } },
        m: { type: 'object', additionalProperties: { type: 'boolean' } },
        plain: { anyOf: [{ type: 'array', items: { type: 'string' } }, { type: 'null' }], default: null },
      },
      ['seq', 'm'],
    ],
    [
      'typed_dicts',
      {
        box: {
          type: 'object',
          properties: { corner: { type: 'object', properties: { x: { type: 'number' }, label: { type: 'string' } } }, size: { type: 'integer' } },
          required: ['corner', 'size'],
        },
        extra: {
          anyOf: [{ type: 'object', additionalProperties: { type: 'object', properties: { x: { type: 'number' }, label: { type: 'string' } } } }, { type: 'null' }],
          default: null,
        },
      },
      ['box'],
    ],
    [
      'dataclass_args',
      {
        place: {
          type: 'object',
          properties: { city: { type: 'string' }, size: { enum: ['red', 'blue'] }, tags: { type: 'array', items: { type: 'string' } } },
          required: ['city'],
        },
        other: {
          anyOf: [{ type: 'object', properties: { city: { type: 'string' }, size: { enum: ['red', 'blue'] }, tags: { type: 'array', items: { type: 'string' } } }, required: ['city'] }, { type: 'null' }],
          default: null,
        },
      },
      ['place'],
    ],
  ])('%s', (name, properties, required) => {
    expect(tools[name].inputSchema).toEqual({ type: 'object', properties, required });
  });

  it('description is the first paragraph; Args lines (with types, continuations) describe parameters', () => {
    expect(tools.documented.description).toBe('Forecast for a city.');
    expect(tools.documented.inputSchema).toEqual({
      type: 'object',
      properties: {
        city: { type: 'string', description: "the city's name, as people write it" },
        days: { type: 'integer', default: 3, description: 'how many days ahead, at most 7' },
        units: { type: 'string', default: 'metric', description: 'metric or imperial' },
      },
      required: ['city'],
    });
    expect(tools.literals.description).toBeNull();
  });

  it('@tool(name=, description=) win over the function name and docstring', () => {
    expect(tools.renamed).toMatchObject({ module: 'sigs', description: 'Explicit description wins.' });
    expect(tools.original).toBeUndefined();
  });

  it("the publish body's description and schema win over everything", () => {
    expect(tools.explicit.description).toBe('From the publish body');
    expect(tools.explicit.inputSchema).toEqual({ type: 'object', properties: { y: { type: 'string' } }, required: ['y'] });
  });

  it('the injected credentials parameter, *args and **kwargs are never part of the schema', () => {
    expect(Object.keys(tools.untyped.inputSchema.properties)).toEqual(['a', 'b', 'c']);
  });
});

describe('--check failures: exit 1, one clear line per problem', () => {
  const failing = async (modules: Record<string, string>) => {
    const d = await versionDir(modules);
    try {
      const r = await check(d);
      expect(r.exitCode).toBe(1);
      return r.stderr.split('\n').filter(Boolean);
    } finally {
      removeDir(d);
    }
  };

  it('a syntax error names the file and the line', async () => {
    expect(await failing({ add: 'from platform_mcp import tool\n\n@tool\ndef add(a, b)\n    return a + b\n' })).toEqual([
      expect.stringMatching(/^tools\/add\.py, line 4: SyntaxError: /),
    ]);
  });

  it('a module without a decorated function', async () => {
    expect(await failing({ util: 'def helper():\n    return 1\n' })).toEqual(['tools/util.py: no function decorated with @tool (from platform_mcp import tool)']);
  });

  it('an import error and an exception at import name the file and line', async () => {
    const lines = await failing({
      fetcher: 'import requests_that_do_not_exist\n\n@tool\ndef fetcher(): pass\n',
      ok: '@tool\ndef ok(): pass\n',
      raiser: '\n\nraise RuntimeError("no config")\n',
    });
    expect(lines).toEqual([
      "tools/fetcher.py, line 1: ModuleNotFoundError: No module named 'requests_that_do_not_exist'",
      'tools/raiser.py, line 3: RuntimeError: no config',
    ]);
  });

  it('a tool name MCP clients cannot use, and one name used twice', async () => {
    expect(await failing({ a: '@tool(name="has space")\ndef a(): pass\n', b: '@tool(name="dup")\ndef b(): pass\n', c: '@tool(name="dup")\ndef c(): pass\n' })).toEqual([
      "tools/a.py: tool name 'has space': use 1 to 128 letters, digits, '_', '-' or '.'",
      'tools/c.py: tool name dup is already used by tools/b.py',
    ]);
  });

  it('several problems give several lines and no manifest', async () => {
    const lines = await failing({ a: 'def x(:\n', b: 'x = 1\n', c: '@tool\ndef c(): pass\n' });
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^tools\/a\.py, line 1: SyntaxError: /);
    expect(lines[1]).toBe('tools/b.py: no function decorated with @tool (from platform_mcp import tool)');
  });
});

describe('templates/mcp-python', () => {
  it('its module passes the build step with a derived schema', async () => {
    const source = readFileSync(join(import.meta.dirname, '..', '..', 'templates', 'mcp-python', 'greet.py'), 'utf8');
    const d = await versionDir({ greet: source });
    try {
      const r = await check(d);
      expect(r.stderr).toBe('');
      expect(r.manifest!.tools).toEqual([
        {
          name: 'greet',
          module: 'greet',
          description: 'Greets someone by name.',
          inputSchema: {
            type: 'object',
            properties: {
              name: { type: 'string', description: 'who to greet' },
              style: { type: 'string', enum: ['plain', 'excited'], default: 'plain', description: 'plain or excited' },
              times: { type: 'integer', default: 1, description: 'how many times to repeat the greeting (1 to 5)' },
            },
            required: ['name'],
          },
        },
      ]);
    } finally {
      removeDir(d);
    }
  });
});
