// A hostile MCP server for the browser's XSS table: newline-delimited
// JSON-RPC on stdio, no dependencies. Its server name, tool name, tool
// description and tool output all carry markup; the page must show them
// as text.
import readline from 'node:readline';

const XSS = '<img src=x onerror="window.__xss=1"><script>window.__xss=1</script>';
const TOOL = '<img src=x onerror=window.__xss=1>';

const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  let m;
  try {
    m = JSON.parse(line);
  } catch {
    return;
  }
  if (m.id === undefined) return; // notifications
  const reply = (result) => send({ jsonrpc: '2.0', id: m.id, result });
  switch (m.method) {
    case 'initialize':
      reply({
        protocolVersion: m.params?.protocolVersion ?? '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: XSS, version: '1.0.0' },
      });
      break;
    case 'tools/list':
      reply({
        tools: [{
          name: TOOL,
          description: `${XSS} Echoes its text.`,
          inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
        }],
      });
      break;
    case 'tools/call':
      reply({ content: [{ type: 'text', text: `${XSS} echo: ${m.params?.arguments?.text ?? ''}` }] });
      break;
    case 'ping':
      reply({});
      break;
    default:
      send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `no method ${m.method}` } });
  }
});
