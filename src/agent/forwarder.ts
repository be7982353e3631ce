// TR20: the one program of yoke's that runs inside the agent's sandbox, as
// the script text contain.ts writes next to the proxy's socket.

/**
 * The forwarder, run inside the sandbox by the runner's own node: it listens on the sandbox's loopback
 * (the proxy port, and the model's port when the model is on loopback), finds which command opened each
 * connection (its socket's inode, through /proc), and relays it over the unix socket, headed by one line.
 */
export const FORWARDER = `
const net = require('node:net');
const fs = require('node:fs');
const [proxyPort, modelPort, sock] = process.argv.slice(2);
function commandOf(port) {
  try {
    const line = fs.readFileSync('/proc/net/tcp', 'utf8').split('\\n').find((l) => { const f = l.trim().split(/\\s+/); return f[1] && parseInt(f[1].split(':')[1], 16) === port && f[2] && parseInt(f[2].split(':')[1], 16) !== port; });
    const inode = line && line.trim().split(/\\s+/)[9];
    for (const pid of fs.readdirSync('/proc').filter((p) => /^\\d+$/.test(p))) {
      if (Number(pid) === process.pid) continue;
      let fds = [];
      try { fds = fs.readdirSync('/proc/' + pid + '/fd'); } catch { continue; }
      for (const fd of fds) {
        let t = '';
        try { t = fs.readlinkSync('/proc/' + pid + '/fd/' + fd); } catch { continue; }
        if (t === 'socket:[' + inode + ']') return fs.readFileSync('/proc/' + pid + '/cmdline', 'utf8').split('\\0').filter(Boolean).join(' ').slice(0, 160);
      }
    }
  } catch {}
  return 'unknown';
}
function relay(kind) {
  return (client) => {
    client.pause();
    const command = commandOf(client.remotePort);
    const up = net.connect(sock, () => {
      up.write(JSON.stringify({ kind, command }) + '\\n');
      client.pipe(up).pipe(client);
      client.resume();
    });
    up.on('error', () => client.destroy());
    client.on('error', () => up.destroy());
  };
}
let ready = 0;
const want = modelPort === '-' ? 1 : 2;
const up = () => { if (++ready === want) fs.writeFileSync(process.env.YOKE_FORWARD_READY, ''); };
net.createServer(relay('proxy')).listen(Number(proxyPort), '127.0.0.1', up);
if (modelPort !== '-') net.createServer(relay('model')).listen(Number(modelPort), '127.0.0.1', up);
`;
