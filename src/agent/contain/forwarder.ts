// TR20: the one program of yoke's that runs inside a sandbox (an agent's, or
// a command's), as the script text contain.ts writes next to the proxy's socket.

/**
 * The forwarder, run inside the sandbox by the runner's own node: it listens on the sandbox's loopback on
 * each `kind:port` it is given (the proxy's port, the model's, and loopback services a command may reach
 * by name, `loop:3000`), finds which command opened each connection (its socket's inode, through /proc),
 * and relays it over the unix socket, headed by one line: the kind, the command and the port. What passes
 * is the proxy's decision, outside: a header written straight to the socket gets no more than the forwarder's.
 */
export const FORWARDER = `
const net = require('node:net');
const fs = require('node:fs');
const [sock, ...ports] = process.argv.slice(2);
function commandOf(port) {
  try {
    const lines = [
      ...fs.readFileSync('/proc/net/tcp', 'utf8').split('\\n'),
      ...(() => { try { return fs.readFileSync('/proc/net/tcp6', 'utf8').split('\\n'); } catch { return []; } })(),
    ];
    const line = lines.find((l) => { const f = l.trim().split(/\\s+/); return f[1] && parseInt(f[1].split(':').pop(), 16) === port && f[2] && parseInt(f[2].split(':').pop(), 16) !== port; });
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
function relay(kind, port) {
  return (client) => {
    client.pause();
    const command = commandOf(client.remotePort);
    const up = net.connect(sock, () => {
      up.write(JSON.stringify({ kind, command, port }) + '\\n');
      client.pipe(up).pipe(client);
      client.resume();
    });
    up.on('error', () => client.destroy());
    client.on('error', () => up.destroy());
  };
}
let ready = 0;
const up = () => { if (++ready === ports.length) fs.writeFileSync(process.env.YOKE_FORWARD_READY, ''); };
for (const p of ports) {
  const [kind, port] = p.split(':');
  net.createServer(relay(kind, Number(port))).listen(Number(port), '127.0.0.1', up);
  // localhost may be ::1 first; the same relay there, where the sandbox has it.
  const six = net.createServer(relay(kind, Number(port)));
  six.on('error', () => {});
  six.listen(Number(port), '::1');
}
`;
