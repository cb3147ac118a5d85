import { cpSync, existsSync, readdirSync, renameSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { AbortError } from '../client/errors.js';
import { packageFile } from '../package-root.js';
import { MCP_SERVER_NAME_RE } from '../api/mcp.js';

/** templates/ ships beside dist/ in the package. */
export const TEMPLATES_DIR = packageFile('templates');

export type TemplateKind = 'function' | 'agent' | 'mcp';

export interface TemplateInfo {
  name: string;
  kind: TemplateKind;
  /** The runtime (functions) or framework (agents) as a person would name it. */
  variant: string;
}

/** In the order the picker shows them: the most common first. */
export const TEMPLATES: TemplateInfo[] = [
  { name: 'function-python', kind: 'function', variant: 'Python' },
  { name: 'function-nodejs', kind: 'function', variant: 'Node.js' },
  { name: 'function-go', kind: 'function', variant: 'Go' },
  { name: 'function-ruby', kind: 'function', variant: 'Ruby' },
  { name: 'agent-langgraph', kind: 'agent', variant: 'LangGraph' },
  { name: 'agent-adk', kind: 'agent', variant: 'Google ADK' },
  { name: 'agent-crewai', kind: 'agent', variant: 'CrewAI' },
  { name: 'mcp-python', kind: 'mcp', variant: 'Python' },
];

export const TEMPLATE_NAMES = TEMPLATES.map((t) => t.name);

export const KINDS: { kind: TemplateKind; label: string; hint: string }[] = [
  { kind: 'function', label: 'Function', hint: 'a handler called for every request' },
  { kind: 'agent', label: 'Agent', hint: 'an AI agent on LangGraph, Google ADK or CrewAI' },
  { kind: 'mcp', label: 'MCP tools', hint: 'Python tools behind an MCP server' },
];

/**
 * npm leaves `.gitignore` files out of a package, so templates keep theirs as `gitignore` and
 * it gets its dot when copied (as create-react-app does).
 */
const RENAMED: Record<string, string> = { gitignore: '.gitignore' };

export interface Created {
  template: string;
  dir: string;
  files: string[];
  /** The command to run next, for the user. */
  next: string;
}

/** Copies a template into `dir` (created when missing), refusing to overwrite any file. */
export function createFromTemplate(template: string, dir: string, bin: string): Created {
  if (!TEMPLATE_NAMES.includes(template)) throw new AbortError(`no template ${template}`, `choose one of ${TEMPLATE_NAMES.join(', ')}`, 2);
  const source = join(TEMPLATES_DIR, template);
  const target = resolve(dir);
  const files = readdirSync(source).map((f) => RENAMED[f] ?? f).sort();
  const clash = files.filter((f) => existsSync(join(target, f)));
  if (clash.length) throw new AbortError(`${dir} already has ${clash.join(', ')}`, 'choose an empty directory');
  cpSync(source, target, { recursive: true });
  for (const [from, to] of Object.entries(RENAMED)) if (existsSync(join(target, from)) && !existsSync(join(source, to))) renameSync(join(target, from), join(target, to));
  return { template, dir: target, files, next: nextStep(template, dir, target, bin) };
}

function nextStep(template: string, dir: string, target: string, bin: string): string {
  // An MCP folder is published to a server, not deployed (spec 2 §4.2).
  if (template.startsWith('mcp-')) {
    const slug = basename(target).toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^[^a-z]+|-+$/g, '').slice(0, 40);
    const server = MCP_SERVER_NAME_RE.test(slug) ? slug : 'NAME';
    return `${bin} mcp create ${server} && ${bin} mcp publish ${server} ${dir} --wait`;
  }
  return `${bin} deploy ${dir}`;
}
