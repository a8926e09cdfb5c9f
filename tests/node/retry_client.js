// A stock Node.js gRPC caller: @grpc/grpc-js with a service-config retry policy.
//
//   node retry_client.js TARGET PROTO_DIR SERVICE_CONFIG_JSON PACK INPUT_JSON REQUEST_ID
//
// Calls InvokePack once (the channel retries per the service config) and prints one JSON
// line: {ok, result | code, details, trailers}. Nothing here knows the control plane's
// vocabulary: retries come from the service config and grpc-retry-pushback-ms alone.
"use strict";
const path = require("path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const [target, protoDir, serviceConfig, pack, input, requestId] = process.argv.slice(2);
const definition = protoLoader.loadSync(
  path.join(protoDir, "control_plane", "v1", "control_plane.proto"),
  { includeDirs: [protoDir], keepCase: true, longs: String, enums: String, defaults: true },
);
const proto = grpc.loadPackageDefinition(definition);
const Service = proto.control_plane.v1.ControlPlaneService;
const client = new Service(target, grpc.credentials.createInsecure(), {
  "grpc.service_config": serviceConfig,
  "grpc.enable_retries": 1,
});
const deadline = new Date(Date.now() + 30000);
client.InvokePack(
  { pack: pack, input: Buffer.from(input), request_id: requestId },
  { deadline: deadline },
  (err, response) => {
    let out;
    if (err) {
      const trailers = {};
      for (const [key, values] of Object.entries(err.metadata ? err.metadata.getMap() : {})) {
        trailers[key] = Buffer.isBuffer(values) ? values.toString("base64") : String(values);
      }
      out = { ok: false, code: grpc.status[err.code], details: err.details, trailers: trailers };
    } else {
      out = { ok: true, result: JSON.parse(Buffer.from(response.result).toString()) };
    }
    process.stdout.write(JSON.stringify(out) + "\n");
    client.close();
  },
);
