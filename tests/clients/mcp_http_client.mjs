// An MCP client written with the official TypeScript SDK, for
// tests/python/test_http_typescript.py: it connects to `dsh mcp --http`
// with a bearer token, runs the steps it is given and prints one JSON line
// per step on stdout.
//
//   node mcp_http_client.mjs CONFIG_JSON
//
// CONFIG_JSON: {
//   "modules": "…/node_modules",      where the SDKs are installed
//   "sdk": "sdk" | "client",          @modelcontextprotocol/sdk (v1) or
//                                     @modelcontextprotocol/client (v2)
//   "era": "2025-11-25" | "2026-07-28",
//   "url": "http://127.0.0.1:PORT/mcp", "token": "…",
//   "steps": [
//     {"do": "list"},
//     {"do": "call", "command": "…", "answer": "allow once" | null, "progress": true},
//     {"do": "cancel", "command": "…"}
//   ]
// }
//
// "answer" is what the elicitation handler answers on the approval form
// (null: it fails the step if asked). "cancel" starts the call, prints
// {"state": "started"}, waits for a line on stdin, aborts the call through
// its AbortSignal, prints {"state": "aborted", …}, and waits for another
// line before the next step (so the test can check the command is gone
// while the session is still open).
//
// Every failure is a JSON line {"step": "error", …} and exit status 1.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const config = JSON.parse(process.argv[2]);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

function emit(object) {
    process.stdout.write(JSON.stringify(object) + "\n");
}

// An ES module of an installed package, found through its `exports` map
// (ES modules do not read NODE_PATH).
async function load(pkg, subpath) {
    const root = join(config.modules, ...pkg.split("/"));
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    const exports = manifest.exports ?? {};
    let target = exports[subpath];
    // A pattern key ("./*": {"import": "./dist/esm/*"}), as Node matches it.
    for (const [key, value] of Object.entries(exports)) {
        if (target !== undefined) break;
        const [head, tail, ...more] = key.split("*");
        if (more.length === 0 && tail !== undefined && subpath.startsWith(head) && subpath.endsWith(tail)) {
            const match = subpath.slice(head.length, subpath.length - tail.length);
            target = JSON.parse(JSON.stringify(value).replaceAll("*", match));
        }
    }
    if (target && typeof target === "object") target = target.import ?? target.default;
    if (target && typeof target === "object") target = target.default;
    if (typeof target !== "string") throw new Error(`${pkg} exports no ${subpath}`);
    return import(pathToFileURL(join(root, target)).href);
}

// The SDK's pieces, by major version.
async function sdk() {
    if (config.sdk === "sdk") {
        const { Client } = await load("@modelcontextprotocol/sdk", "./client/index.js");
        const { StreamableHTTPClientTransport } = await load(
            "@modelcontextprotocol/sdk",
            "./client/streamableHttp.js",
        );
        const { ElicitRequestSchema } = await load("@modelcontextprotocol/sdk", "./types.js");
        const version = JSON.parse(
            readFileSync(join(config.modules, "@modelcontextprotocol/sdk/package.json"), "utf8"),
        ).version;
        if (config.era !== "2025-11-25") throw new Error(`v1 of the SDK does not speak ${config.era}`);
        return {
            version,
            client: (info, capabilities) => new Client(info, { capabilities }),
            onElicit: (client, handler) => client.setRequestHandler(ElicitRequestSchema, handler),
            transport: (url, init) => new StreamableHTTPClientTransport(url, { requestInit: init }),
            call: (client, params, options) => client.callTool(params, undefined, options),
            negotiated: (_client, transport) => transport.protocolVersion,
        };
    }
    const { Client, StreamableHTTPClientTransport } = await load("@modelcontextprotocol/client", ".");
    const version = JSON.parse(
        readFileSync(join(config.modules, "@modelcontextprotocol/client/package.json"), "utf8"),
    ).version;
    const negotiation = config.era === "2025-11-25" ? { mode: "legacy" } : { mode: { pin: config.era } };
    return {
        version,
        client: (info, capabilities) => new Client(info, { capabilities, versionNegotiation: negotiation }),
        onElicit: (client, handler) => client.setRequestHandler("elicitation/create", handler),
        transport: (url, init) => new StreamableHTTPClientTransport(url, { requestInit: init }),
        call: (client, params, options) => client.callTool(params, options),
        negotiated: (client) => client.getNegotiatedProtocolVersion(),
    };
}

function text(result) {
    return (result.content ?? [])
        .filter((block) => block.type === "text")
        .map((block) => block.text)
        .join("\n");
}

async function main() {
    const api = await sdk();
    const client = api.client(
        { name: "dsh-test-typescript", version: "0" },
        { elicitation: { form: {} } },
    );
    // What the current step's approval form is answered with, and what was asked.
    let answer = null;
    let asked = [];
    api.onElicit(client, async (request) => {
        const params = request.params;
        asked.push({ message: params.message, schema: params.requestedSchema });
        if (answer === null) throw new Error("asked, and this step has no answer");
        return { action: "accept", content: { decision: answer } };
    });
    const transport = api.transport(new URL(config.url), {
        headers: { Authorization: `Bearer ${config.token}` },
    });
    await client.connect(transport);
    emit({
        step: "connected",
        sdk: config.sdk,
        version: api.version,
        protocolVersion: api.negotiated(client, transport) ?? null,
        server: client.getServerVersion()?.name ?? null,
    });
    for (const step of config.steps) {
        if (step.do === "list") {
            const listed = await client.listTools();
            emit({ step: "list", names: listed.tools.map((tool) => tool.name) });
        } else if (step.do === "call") {
            answer = step.answer ?? null;
            asked = [];
            const progress = [];
            const options = step.progress
                ? { onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true }
                : {};
            const result = await api.call(
                client,
                { name: "bash", arguments: { command: step.command } },
                options,
            );
            emit({
                step: "call",
                command: step.command,
                text: text(result),
                isError: result.isError === true,
                asked,
                progress,
            });
        } else if (step.do === "cancel") {
            const controller = new AbortController();
            const call = api
                .call(
                    client,
                    { name: "bash", arguments: { command: step.command } },
                    { signal: controller.signal },
                )
                .then(
                    (result) => ({ settled: "result", text: text(result) }),
                    (error) => ({ settled: "error", name: error?.name ?? null, message: String(error?.message ?? error) }),
                );
            emit({ step: "cancel", state: "started" });
            await lines.next();
            controller.abort("the test cancels");
            emit({ step: "cancel", state: "aborted", ...(await call) });
            await lines.next();
        } else {
            throw new Error(`unknown step ${JSON.stringify(step)}`);
        }
    }
    if (typeof transport.terminateSession === "function" && transport.sessionId) {
        await transport.terminateSession();
    }
    await client.close();
    emit({ step: "closed" });
}

main().then(
    () => process.exit(0),
    (error) => {
        emit({ step: "error", message: String(error?.stack ?? error) });
        process.exit(1);
    },
);
