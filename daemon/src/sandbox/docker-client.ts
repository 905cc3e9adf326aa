import Docker from "dockerode";

/**
 * The one place a Docker client is made: DOCKER_HOST (unix:// or tcp://) from
 * the environment passed in at the CLI edge, else the default socket.
 */
export function createDockerClient(env: NodeJS.ProcessEnv = {}): Docker {
  const host = env.DOCKER_HOST;
  if (!host) return new Docker({ socketPath: "/var/run/docker.sock" });
  if (host.startsWith("unix://")) return new Docker({ socketPath: host.slice("unix://".length) });
  const url = new URL(host.replace(/^tcp:/, "http:"));
  return new Docker({ host: url.hostname, port: Number(url.port || 2375), protocol: "http" });
}
