import { createRequire } from 'node:module';
import type DockerT from 'dockerode';

/**
 * Heavy dependencies loaded on first use, so the daemon's start-to-healthy stays small (issue 2's
 * 300 ms goal): dockerode pulls in grpc, protobufjs and ssh2 (~150 ms) and is needed only by the
 * docker drivers; undici (~80 ms) only once a workload is called. Both are CommonJS, so a
 * synchronous require keeps their call sites unchanged.
 */
const require = createRequire(import.meta.url);

export const loadDockerode = (): typeof DockerT => require('dockerode') as typeof DockerT;

let undici: typeof import('undici') | undefined;
export const loadUndici = (): typeof import('undici') => (undici ??= require('undici') as typeof import('undici'));

/** undici's request, loading undici on the first call. */
export const request = ((...args: Parameters<typeof import('undici').request>) => loadUndici().request(...args)) as typeof import('undici').request;

/*
 * Loaded on first use as well (docs/decisions/speed-daemon.md): each cost the daemon's start
 * 20-140 ms of import for areas that need them only on a deploy upload (busboy, tar), a backup
 * (tar), a schedule (croner), a Knative render (yaml) or a gateway JWT (jose).
 */
export const loadTar = (): typeof import('tar') => require('tar') as typeof import('tar');
export const loadBusboy = (): typeof import('busboy') => require('busboy') as typeof import('busboy');
export const loadCroner = (): typeof import('croner') => require('croner') as typeof import('croner');
export const loadYaml = (): typeof import('yaml') => require('yaml') as typeof import('yaml');
let jose: Promise<typeof import('jose')> | undefined;
export const loadJose = (): Promise<typeof import('jose')> => (jose ??= import('jose'));

/*
 * Node's own https and tls (~5-10 ms to load, a third of the built-ins the start loads): only a
 * server with a certificate (`platform server start --tls-cert`) uses them, so they are loaded by
 * the first https listener.
 */
let https: typeof import('node:https') | undefined;
export const loadHttps = (): typeof import('node:https') => (https ??= require('node:https') as typeof import('node:https'));
/** node:https if an https server may exist (loadHttps was called), else undefined. */
export const httpsIfLoaded = (): typeof import('node:https') | undefined => https;
export const loadTls = (): typeof import('node:tls') => require('node:tls') as typeof import('node:tls');
