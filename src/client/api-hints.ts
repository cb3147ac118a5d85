/**
 * The API's messages name HTTP routes ("GET /v1/agents/x/revisions lists them"), right for HTTP
 * clients; a person at the CLI gets the command that does the same. Each rule matches one hint the
 * daemon gives; a route with no rule is left as it is rather than guessed at.
 */
const RULES: [RegExp, (...groups: string[]) => string][] = [
  [/\(GET \/v1\/agents\/([^/\s]+)\/revisions lists them\)/, (name) => `(\`platform agents revisions ${name}\` lists them)`],
  [/\(POST \/v1\/agents\/\{name\}\/redeploy\)/, () => '(`platform agents redeploy NAME`)'],
  [/PUT \/v1\/agents\/([^/\s]+)\/embed enables one/, (name) => `\`platform embed set ${name}\` enables one`],
  [/\(POST \/v1\/projects\/\{projectID\}\/members\)/, () => '(`platform members add EMAIL`)'],
  [/create it first with POST \/v1\/users/, () => 'create it first with `platform users create EMAIL`'],
  [/change it with PATCH \/v1\/orgs\/[^/\s]+\/members\/[^/\s]+/, () => 'change it with `platform orgs members update ORG EMAIL --role ROLE`'],
  [/change it with PATCH \/v1\/projects\/[^/\s]+\/members\/[^/\s]+/, () => 'change it with `platform members update EMAIL --role ROLE`'],
  [/invite them instead \(POST \/v1\/projects\/([^/\s]+)\/invitations\)/, (project) => `invite them instead (\`platform invitations create EMAIL -p ${project}\`)`],
  [/via POST \/v1\/auth\/change-password/, () => 'with `platform passwd`'],
  // The 401 of every management route (spec 1): the next line says `platform login`.
  [/^this is a management endpoint and requires authentication: sign in via POST \/v1\/auth\/login and send the token as Authorization: Bearer <token>$/, () => 'not signed in, or the sign-in has ended'],
  [/: send Authorization: Bearer <token>$/, () => ': the CLI sent no credential'],
  [/turn it on with PUT \/v1\/agents\/[^/\s]+\/memory\/policy \{"enabled": true\} \((platform memory policy [^)]+)\)/, (command) => `turn it on with \`${command}\``],
  [/use PUT \/v1\/agents\/\{name\}\/memory\/policy \((platform memory policy AGENT)\)/, (command) => `use \`${command}\``],
  [/Persisted lines: GET \/v1\/agents\/([^/\s]+)\/logs\/history/, (name) => `Persisted lines: \`platform logs ${name} --history\``],
  // The API calls cache instances memorystores (spec 3); the CLI says cache throughout.
  [/^memorystore (\S+) not found$/, (name) => `cache ${name} not found`],
];

export function forPeople(message: string): string {
  let out = message;
  for (const [pattern, replace] of RULES) out = out.replace(pattern, (_m, ...groups: string[]) => replace(...groups));
  return out;
}
