import type Docker from 'dockerode';
import { loadDockerode } from '../../lazy/modules.js';
import type { CacheDriver, LaunchSpec, ServerHandle } from './driver.js';

const containerName = (id: string) => `platform-cache-${id}`;

/**
 * Runs each instance as a container of a local redis image with host networking (DESIGN: never
 * address a container by a bridge IP). The instance directory is bind-mounted at the same path,
 * so the redis.conf the daemon writes works unchanged in both drivers; the container gets the
 * size class's memory limit. The platform restarts crashed servers itself, so the container's
 * restart policy stays "no" and re-adoption looks the container up by name.
 */
export class DockerDriver implements CacheDriver {
  readonly name = 'docker' as const;
  private readonly docker: Docker;

  constructor(
    private readonly image: string,
    docker?: Docker,
  ) {
    this.docker = docker ?? new (loadDockerode())();
  }

  async launch(spec: LaunchSpec): Promise<ServerHandle> {
    await this.removeByName(spec.id);
    const user = typeof process.getuid === 'function' ? `${process.getuid()}:${process.getgid!()}` : undefined;
    const container = await this.docker.createContainer({
      name: containerName(spec.id),
      Image: this.image,
      Cmd: ['redis-server', spec.paths.conf],
      ...(user ? { User: user } : {}),
      Labels: { 'platform.cache.instance': spec.id },
      HostConfig: {
        NetworkMode: 'host',
        Binds: [`${spec.paths.dir}:${spec.paths.dir}`],
        Memory: spec.memoryLimitBytes,
        RestartPolicy: { Name: 'no' },
      },
    });
    await container.start();
    const info = await container.inspect();
    const exited = container.wait().then(
      (r: { StatusCode: number }) => `redis-server container exited (code ${r.StatusCode})`,
      (e: Error) => `redis-server container gone (${e.message})`,
    );
    return { containerId: container.id, pid: info.State.Pid, exited };
  }

  async find(spec: LaunchSpec): Promise<ServerHandle | undefined> {
    try {
      const info = await this.docker.getContainer(containerName(spec.id)).inspect();
      return info.State.Running ? { containerId: info.Id, pid: info.State.Pid } : undefined;
    } catch {
      return undefined;
    }
  }

  async alive(h: ServerHandle): Promise<boolean> {
    if (!h.containerId) return false;
    try {
      return (await this.docker.getContainer(h.containerId).inspect()).State.Running;
    } catch {
      return false;
    }
  }

  async stop(h: ServerHandle, graceMs: number): Promise<void> {
    if (!h.containerId) return;
    const c = this.docker.getContainer(h.containerId);
    try {
      await c.stop({ t: Math.ceil(graceMs / 1000) });
    } catch {
      // already stopped
    }
    try {
      await c.remove({ force: true });
    } catch {
      // already removed
    }
  }

  private async removeByName(id: string): Promise<void> {
    try {
      await this.docker.getContainer(containerName(id)).remove({ force: true });
    } catch {
      // none left over
    }
  }

  async check(): Promise<string> {
    try {
      await this.docker.ping();
    } catch (e) {
      return `docker engine not reachable: ${(e as Error).message}`;
    }
    try {
      await this.docker.getImage(this.image).inspect();
      return 'ok';
    } catch {
      return `image ${this.image} not found; build it with scripts/build-redis-image.sh`;
    }
  }

  /** The image records its server version in the label redis.version. */
  async serverVersion(): Promise<string | undefined> {
    try {
      const info = await this.docker.getImage(this.image).inspect();
      return info.Config?.Labels?.['redis.version'];
    } catch {
      return undefined;
    }
  }
}
