// /api goes to the agent server, so the page talks to its own origin.
const agentServer = process.env.AGENT_SERVER ?? "http://127.0.0.1:8787";

export default {
  async rewrites() {
    return [{ source: "/api/:path*", destination: `${agentServer}/api/:path*` }];
  },
};
