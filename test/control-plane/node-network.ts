import { execFile } from 'node:child_process';
import { createConnection, createServer, type Socket } from 'node:net';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A node's addresses, all its own: a /30 link between the machine and the node's network
 * namespace, and the pods' /24 behind it. Index k gives link `rdnode<k>`, host end
 * 10.88.255.(4k+1), node end 10.88.255.(4k+2) and pods 10.88.k.0/24; the control plane's service
 * range (10.0.0.0/24) is elsewhere. The node's namespace has no default route, so nothing a pod
 * sends can go further than the node and the host end of its link.
 */
export interface NodeNetwork {
  index: number;
  /** The host end of the veth pair (the node end is `eth0` in the node's namespace). */
  link: string;
  hostIp: string;
  /** The node's InternalIP: the kubelet serves here. */
  nodeIp: string;
  podCidr: string;
}

const MAX_NODES = 63;

export function nodeNetwork(index: number): NodeNetwork {
  return {
    index,
    link: `rdnode${index}`,
    hostIp: `10.88.255.${4 * index + 1}`,
    nodeIp: `10.88.255.${4 * index + 2}`,
    podCidr: `10.88.${index}.0/24`,
  };
}

/** The first index whose link and addresses no other node on this machine uses. */
export async function chooseNodeNetwork(): Promise<NodeNetwork> {
  const [{ stdout: links }, { stdout: addresses }] = await Promise.all([run('ip', ['-o', 'link', 'show']), run('ip', ['-o', '-4', 'addr', 'show'])]);
  const usedLinks = new Set([...links.matchAll(/^\d+:\s+([^:@\s]+)/gm)].map((match) => match[1]));
  const usedAddresses = new Set([...addresses.matchAll(/inet (\d+\.\d+\.\d+\.\d+)\//g)].map((match) => match[1]));
  for (let index = 0; index < MAX_NODES; index++) {
    const network = nodeNetwork(index);
    if (!usedLinks.has(network.link) && !usedAddresses.has(network.hostIp)) return network;
  }
  throw new Error(`no free node network: links rdnode0..rdnode${MAX_NODES - 1} are all in use`);
}

async function ip(args: readonly string[], netnsPid?: number): Promise<void> {
  const [command, commandArgs] = netnsPid === undefined ? ['ip', args] : ['nsenter', ['-t', String(netnsPid), '-n', '--', 'ip', ...args]];
  try {
    await run(command, commandArgs);
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`${command} ${commandArgs.join(' ')} failed: ${stderr.trim() || String(error)}`, { cause: error });
  }
}

/**
 * Links the node's network namespace (that of process `netnsPid`) to the machine: a veth pair,
 * both ends addressed, and a route on the machine to the pods through the node. The link and the
 * route disappear with the namespace.
 */
export async function connectNodeNetwork(network: NodeNetwork, netnsPid: number): Promise<void> {
  // Fails when another node took the name meanwhile: nothing of ours to undo then.
  await ip(['link', 'add', network.link, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', String(netnsPid)]);
  try {
    await ip(['addr', 'add', `${network.hostIp}/30`, 'dev', network.link]);
    await ip(['link', 'set', network.link, 'up']);
    await ip(['addr', 'add', `${network.nodeIp}/30`, 'dev', 'eth0'], netnsPid);
    await ip(['link', 'set', 'eth0', 'up'], netnsPid);
    await ip(['route', 'add', network.podCidr, 'via', network.nodeIp, 'dev', network.link]);
  } catch (error) {
    await deleteLink(network.link);
    throw error;
  }
}

export async function linkExists(link: string): Promise<boolean> {
  try {
    await run('ip', ['link', 'show', 'dev', link]);
    return true;
  } catch {
    return false;
  }
}

/** Removes the host end of the link if it outlived the namespace (deleting one end deletes both). */
export async function deleteLink(link: string): Promise<void> {
  if (await linkExists(link)) await ip(['link', 'delete', 'dev', link]).catch(() => undefined);
}

export interface Relay {
  /** `https://<host ip>:<port>` */
  url: string;
  close(): Promise<void>;
}

/**
 * The API server listens on 127.0.0.1 only, which a process in the node's namespace cannot reach:
 * this forwards TCP from the host end of the node's link to it (TLS passes through untouched).
 */
export async function startRelay(listenIp: string, targetPort: number): Promise<Relay> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const server = createServer((client) => {
    const upstream = createConnection(targetPort, '127.0.0.1');
    track(client);
    track(upstream);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, listenIp, () => {
      const address = server.address();
      if (address && typeof address === 'object') resolve(address.port);
      else reject(new Error('relay: no port assigned'));
    });
  });
  return {
    url: `https://${listenIp}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * In-cluster clients (the product's pods) dial the `kubernetes` Service, `serviceIp`:443. With no
 * kube-proxy, one DNAT rule in the node's network namespace does what kube-proxy would for that
 * Service: to the relay on the machine end of the link (the API server's certificate names the
 * ClusterIP). PREROUTING for pods' traffic, OUTPUT for the node's own processes. The rule lives
 * in the node's namespace and goes with it.
 */
export async function routeKubernetesService(inNode: readonly string[], iptables: string, serviceIp: string, relayUrl: string, options: { first?: boolean } = {}): Promise<void> {
  const relay = new URL(relayUrl);
  const rule = ['-d', `${serviceIp}/32`, '-p', 'tcp', '--dport', '443', '-j', 'DNAT', '--to-destination', `${relay.hostname}:${relay.port}`];
  // `first`: ahead of the rules already there, so that new connections follow this one.
  const position = options.first ? ['-I', 'CHAIN', '1'] : ['-A', 'CHAIN'];
  for (const chain of ['PREROUTING', 'OUTPUT']) await run('nsenter', [...inNode, iptables, '-w', '-t', 'nat', ...position.map((p) => (p === 'CHAIN' ? chain : p)), ...rule]);
}
