// A move sent and not yet answered, kept (localStorage) with its request id until the table
// answers: after a dropped connection or a reload the very same request is sent again, so the
// move is played once, never lost and never twice (docs/integration.md, "Request ids").
import { create, fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import { ActRequestSchema, type ActRequest, type ActResponse } from "./gen/okey/v1/table_pb.js";
import { retrying, table, tableHeaders } from "./api.js";

const STORE = "okey101.pending";

export function pendingFor(tableId: string): ActRequest | undefined {
  const text = localStorage.getItem(STORE);
  if (!text) return undefined;
  try {
    const request = fromJson(ActRequestSchema, JSON.parse(text) as JsonValue);
    return request.tableId === tableId ? request : undefined;
  } catch {
    localStorage.removeItem(STORE);
    return undefined;
  }
}

/** Send ``request`` until the table answers or refuses it; it is kept until then. */
export async function sendKept(request: ActRequest): Promise<ActResponse> {
  localStorage.setItem(STORE, JSON.stringify(toJson(ActRequestSchema, request)));
  try {
    return await retrying(() => table.act(request, { headers: tableHeaders(request.tableId) }));
  } finally {
    // Answered, or refused for good (a refusal is an answer: the move was not played).
    const kept = pendingFor(request.tableId);
    if (kept?.requestId === request.requestId) localStorage.removeItem(STORE);
  }
}

export function actRequest(fields: Parameters<typeof create<typeof ActRequestSchema>>[1]): ActRequest {
  return create(ActRequestSchema, fields);
}
