"""The simulator's HTTP surface (aiohttp), shaped like SGLang's OpenAI-compatible server.

Streaming chat completions follow SGLang/OpenAI exactly: a role chunk (`delta.role =
"assistant"`, empty content) when the first token is ready, one content chunk per engine chunk, a
finish chunk (empty delta, `finish_reason`), a usage chunk (`choices: []`) when
`stream_options.include_usage` is true, then `data: [DONE]`.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import Any

from aiohttp import web

from harness.sim.batching.engine import Engine
from harness.sim.batching.eval_answers import tokens_of
from harness.sim.batching.prompt import analyse, natural_length, render_chat
from harness.sim.batching.request import SimRequest
from harness.sim.batching.topology.disagg import Bootstrap, bootstrap_of
from harness.sim.batching.topology.dprank import routed_line, routing_key
from harness.sim.frontend import auth
from harness.sim.frontend import metrics as metrics_mod
from harness.sim.frontend.intake import arrival_ns as request_arrival_ns
from harness.sim.frontend.server_state import ServerState


def _error(status: int, message: str, kind: str = "BadRequestError") -> web.Response:
    body = {"object": "error", "message": message, "type": kind, "param": None, "code": status}
    return web.json_response(body, status=status)


class Handlers:
    def __init__(self, st: ServerState):
        self.st = st
        self._model_json = json.dumps(st.model_name)

    # ---- health & info ------------------------------------------------------------------------
    async def health(self, request: web.Request) -> web.Response:
        """SGLang: 503 while starting; then `/health_generate` (and `/health`, unless
        SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION is false) generates one token: 503 when none comes."""
        if not self.st.ready:
            return web.Response(status=503)
        if self.st.engine.stalled and (self.st.health_generates or request.path != "/health"):
            return web.Response(status=503)
        return web.Response(status=200)

    async def ready(self, request: web.Request) -> web.Response:
        if not self.st.ready or self.st.engine.stalled:
            return web.Response(status=503)
        return web.Response(status=200)

    async def models(self, request: web.Request) -> web.Response:
        card = {
            "id": self.st.model_name,
            "object": "model",
            "created": self.st.created,
            "owned_by": "sglang",
            "root": self.st.model_name,  # SGLang: root = served_model_name (http_server.py)
            "max_model_len": self.st.context_length,
        }
        return web.json_response({"object": "list", "data": [card]})

    async def model_info(self, request: web.Request) -> web.Response:
        info = {
            "model_path": self.st.model_path,
            "served_model_name": self.st.model_name,
            "tokenizer_path": self.st.model_path,
            "is_generation": True,
            "weight_version": self.st.server_info.get("weight_version", "default"),
        }
        return web.json_response(info)

    async def server_info(self, request: web.Request) -> web.Response:
        eng = self.st.engine
        info = dict(self.st.server_info)
        states = dict(info.get("internal_states", [{}])[0])
        states["last_gen_throughput"] = _gen_throughput(eng)
        states["memory_usage"] = {"token_capacity": eng.kv.capacity}
        if eng.cfg.spec.enabled:
            states["avg_spec_accept_length"] = eng.stats.avg_accept_length
        states["sim"] = {
            "scheduling_lag_median_ms": eng.stats.lag_median_ms(),
            "scheduling_lag_hist_100us": eng.stats.lag_hist,
            "decode_steps": eng.stats.decode_steps,
            "prefill_steps": eng.stats.prefill_steps,
            "hicache_backup_tokens": eng.kv.traffic.backup_tokens,
            "hicache_load_back_tokens": eng.kv.traffic.load_back_tokens,
            "evicted_tokens": eng.kv.traffic.evicted_tokens,
        }
        info["internal_states"] = [states]
        return web.json_response(info)

    async def metrics(self, request: web.Request) -> web.Response:
        if not self.st.enable_metrics:
            return web.Response(status=404, text="metrics are disabled; launch with --enable-metrics\n")
        text = metrics_mod.render(self.st.engine, self.st.latency, self.st.model_name, self.st.context_length)
        return web.Response(text=text, content_type="text/plain", charset="utf-8")

    async def flush_cache(self, request: web.Request) -> web.Response:
        timeout = float(request.query.get("timeout", "0") or 0)
        eng = self.st.engine
        deadline = time.monotonic() + timeout
        while eng.busy and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if eng.busy:
            return web.Response(
                status=400,
                text="Cache not flushed. Please check the server logs for details; there are running requests.\n",
            )
        eng.kv.flush()
        return web.Response(status=200, text="Cache flushed.\nPlease check backend logs for more details.\n")

    # ---- chat completions ---------------------------------------------------------------------
    async def chat(self, request: web.Request) -> web.StreamResponse:
        arrival_ns = request_arrival_ns(request)
        # Received when its head was read (harness.sim.frontend.intake): the parsing and hashing below is the server's
        # own work, counted in its latencies. Handlers that arrived together (after a step's streams finished, their
        # clients sent again) each take their stamp before any of them parses.
        await asyncio.sleep(0)
        st = self.st
        if not st.ready:
            return _error(503, "The server is not ready yet.", "ServiceUnavailableError")
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _error(400, "request body is not valid JSON")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body["messages"]:
            return _error(400, "messages: a non-empty list is required")
        handover: Bootstrap | None = None
        if st.role is not None:
            found = bootstrap_of(body)
            if isinstance(found, str):
                return _error(400, found)
            handover = found
        dp_rank = st.dp.choose(body)
        if isinstance(dp_rank, str):
            return _error(400, dp_rank)
        rid = request.headers.get("X-Request-ID") or uuid.uuid4().hex
        if st.faults.inject_error():
            self._log_truth_error(rid, arrival_ns, "injected_error")
            return _error(500, "injected server error (--sim-error-rate)", "InternalServerError")
        if st.faults.stall_now():
            st.engine.stall()   # this request is queued at a scheduler that no longer steps
        prompt = analyse(render_chat(body["messages"], body.get("tools")))
        if prompt.tokens >= st.context_length:
            return _error(
                400,
                f"The input ({prompt.tokens} tokens) is longer than the model's context length "
                f"({st.context_length} tokens).",
            )
        max_tokens = body.get("max_completion_tokens")
        if max_tokens is None:
            max_tokens = body.get("max_tokens")
        room = st.context_length - prompt.tokens
        if max_tokens is not None:
            if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
                return _error(400, "max_tokens: a positive integer is required")
            if max_tokens > room and not st.allow_auto_truncate:
                # SGLang's tokenizer manager refuses instead of clamping (only --allow-auto-truncate clamps)
                return _error(
                    400,
                    f"Requested token count exceeds the model's maximum context length of {st.context_length} "
                    f"tokens. You requested a total of {max_tokens + prompt.tokens} tokens: {prompt.tokens} tokens "
                    f"from the input messages and {max_tokens} tokens for the completion. Please reduce the "
                    "number of tokens in the input messages or the completion to fit within the limit.",
                )
            limit = min(max_tokens, room)
        else:
            limit = room
        problem = st.eval_answers.find(body["messages"]) if st.eval_answers is not None else None
        text_tokens = None
        if problem is not None and st.eval_answers is not None:
            text_tokens = tokens_of(st.eval_answers.answer(problem))
            target = min(limit, len(text_tokens))
            finish = "length" if len(text_tokens) > limit else "stop"
        else:
            target = limit if body.get("ignore_eos") else min(limit, natural_length(prompt.digest))
            finish = "length" if target >= limit else "stop"
        if st.role is not None:
            target, finish = st.role.shape(target, finish)
        stream = bool(body.get("stream", False))
        opts = body.get("stream_options") or {}
        include_usage = bool(opts.get("include_usage")) if isinstance(opts, dict) else False
        eng = st.engine
        req = SimRequest(
            rid=rid,
            prompt_tokens=prompt.tokens,
            block_hashes=prompt.block_hashes,
            target_tokens=target,
            max_new_tokens=limit,
            ignore_eos=bool(body.get("ignore_eos")),
            finish_reason=finish,
            stream=stream,
            arrival_ns=arrival_ns,
            hold_until_finish=eng.cfg.spec.enabled
            and eng.cfg.sim_env.enabled
            and eng.cfg.sim_env.token_mode == "fixed",
            text_tokens=text_tokens,
            dp_rank=dp_rank,
            routing_key=routing_key(request.headers),
        )
        drop_at = None
        if st.faults.drop_rate > 0 and stream and st.faults.rng.random() < st.faults.drop_rate:
            drop_at = 1 + int(st.faults.rng.random() * max(1, target - 1))
        status = "ok"
        try:
            if st.role is None or handover is None:
                eng.submit(req)
            else:
                failure = await st.role.admit(req, handover)
                if failure is not None:
                    status = "handover_failed"
                    return _error(500, failure, "InternalServerError")
            if stream:
                return await self._stream(request, req, include_usage, drop_at)
            return await self._complete(req)
        except asyncio.CancelledError:
            status = "client_disconnected"
            raise
        except ConnectionResetError:
            # The client went away; there is nobody left to answer.
            status = "client_disconnected"
            return web.StreamResponse(status=499)
        finally:
            if not req.finished:
                eng.abort(req)
                if st.role is not None:
                    st.role.ended(req)
                if status == "ok":
                    status = "aborted"
            if not req.logged:
                self._observe(req, status)

    def _usage(self, req: SimRequest) -> dict[str, Any]:
        usage: dict[str, Any] = {
            "prompt_tokens": req.prompt_tokens,
            "total_tokens": req.prompt_tokens + req.output,
            "completion_tokens": req.output,
            "prompt_tokens_details": None,
            "reasoning_tokens": 0,                 # SGLang 0.5.23 reports both (no reasoning parser here)
            "completion_tokens_details": None,
        }
        if self.st.enable_cache_report:
            usage["prompt_tokens_details"] = {"cached_tokens": req.cached_tokens}
        return usage

    def _metadata(self, req: SimRequest) -> dict[str, Any]:
        """SGLang's `metadata` of a non-streamed response: the weight version that produced every token
        (`utils/weight_versions.py`; the simulator never updates its weights, so one span)."""
        version = str(self.st.server_info.get("weight_version") or "default")
        return {"weight_version": version, "weight_versions": [{"version": version, "start": 0, "end": req.output}]}

    async def _stream(
        self, request: web.Request, req: SimRequest, include_usage: bool, drop_at: int | None
    ) -> web.StreamResponse:
        resp = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"},
        )
        await resp.prepare(request)
        head = (
            f'data: {{"id":"{req.rid}","object":"chat.completion.chunk","created":{req.arrival_ns // 1_000_000_000},'
            f'"model":{self._model_json},"choices":[{{"index":0,"delta":'
        )
        # chunk shapes as SGLang 0.5.23 streams them: no `usage` key, `reasoning_content: null` in every delta
        tail_open = ',"logprobs":null,"finish_reason":null,"matched_stop":null}]}\n\n'
        started = False
        while True:
            await req.wake.wait()
            req.wake.clear()
            parts: list[str] = []
            done = False
            sent_tokens = False
            while req.chunks:
                c = req.chunks.popleft()
                if c.finish == "abort":
                    done = True
                    parts.append(head + '{"reasoning_content":null}'
                                 + ',"logprobs":null,"finish_reason":"abort","matched_stop":null}]}\n\n')
                    parts.append("data: [DONE]\n\n")
                    break
                if not started and (c.count > 0 or c.finish):
                    started = True
                    parts.append(head + '{"role":"assistant","content":"","reasoning_content":null}' + tail_open)
                if c.count > 0:
                    sent_tokens = True
                    text = json.dumps(req.text(c.start, c.count))
                    parts.append(head + '{"content":' + text + ',"reasoning_content":null}' + tail_open)
                if c.finish:
                    done = True
                    parts.append(
                        head + '{"reasoning_content":null}'
                        + f',"logprobs":null,"finish_reason":"{c.finish}","matched_stop":null}}]}}\n\n'
                    )
                    if include_usage:
                        chunk = {
                            "id": req.rid,
                            "object": "chat.completion.chunk",
                            "created": req.arrival_ns // 1_000_000_000,
                            "model": self.st.model_name,
                            "choices": [],
                            "usage": self._usage(req),
                        }
                        parts.append("data: " + json.dumps(chunk, separators=(",", ":")) + "\n\n")
                    parts.append("data: [DONE]\n\n")
                    break
            if parts:
                await resp.write("".join(parts).encode())
                if sent_tokens:
                    now = time.time_ns()
                    if req.first_token_sent_ns is None:
                        req.first_token_sent_ns = now
                    req.last_token_sent_ns = now
            if done:
                # Record the request before the stream ends, so the truth is on disk by the time the
                # client has seen [DONE].
                self._observe(req, "ok" if req.finished else "aborted")
                await resp.write_eof()
                return resp
            if drop_at is not None and req.emitted >= drop_at:
                self._observe(req, "dropped")
                self.st.engine.abort(req)
                if request.transport is not None:
                    request.transport.close()
                return resp

    async def _complete(self, req: SimRequest) -> web.Response:
        while not req.finished and not req.aborted:
            await req.wake.wait()
            req.wake.clear()
        finish = req.finish_reason
        for c in req.chunks:
            if c.finish == "abort":
                finish = "abort"
        req.chunks.clear()
        now = time.time_ns()
        req.first_token_sent_ns = now
        req.last_token_sent_ns = now
        self._observe(req, "ok" if finish != "abort" else "aborted")
        body = {
            "id": req.rid,
            "object": "chat.completion",
            "created": req.arrival_ns // 1_000_000_000,
            "model": self.st.model_name,
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": req.text(0, req.output),
                        "reasoning_content": None,
                    },
                    "logprobs": None,
                    "finish_reason": finish,
                    "matched_stop": None,
                }
            ],
            "usage": self._usage(req),
            "metadata": self._metadata(req),
        }
        return web.json_response(body)

    # ---- bookkeeping --------------------------------------------------------------------------
    def _observe(self, req: SimRequest, status: str) -> None:
        req.logged = True
        if status == "ok" and req.routing_key is not None and self.st.log_routing:
            print(routed_line(req.routing_key, req.dp_rank), flush=True)
        lat = self.st.latency
        if status == "ok" and req.first_token_sent_ns is not None and req.last_token_sent_ns is not None:
            ttft = (req.first_token_sent_ns - req.arrival_ns) / 1e9
            e2e = (req.last_token_sent_ns - req.arrival_ns) / 1e9
            lat.ttft.observe(ttft)
            lat.e2e.observe(e2e)
            if req.admitted_ns is not None:
                lat.queue.observe((req.admitted_ns - req.arrival_ns) / 1e9)
            if req.output > 1:
                per_token = (req.last_token_sent_ns - req.first_token_sent_ns) / 1e9 / (req.output - 1)
                lat.tpot.observe(per_token)
                lat.itl.observe(per_token)
        if self.st.truth is not None:
            self.st.truth.write(req, status)

    def _log_truth_error(self, rid: str, arrival_ns: int, status: str) -> None:
        if self.st.truth is not None:
            self.st.truth.write_error(rid, arrival_ns, status)


def _gen_throughput(eng: Engine) -> float:
    t = sum(x for x, _ in eng.stats.recent_gen)
    n = sum(y for _, y in eng.stats.recent_gen)
    return n / t if t else 0.0


def build_app(st: ServerState) -> web.Application:
    h = Handlers(st)
    app = web.Application(client_max_size=256 * 1024 * 1024, middlewares=[auth.middleware(st.api_key,
                                                                                          st.admin_api_key)])
    r = app.router
    r.add_get("/health", h.health)
    r.add_get("/health_generate", h.health)
    r.add_get("/ready", h.ready)
    r.add_get("/v1/models", h.models)
    r.add_get("/model_info", h.model_info)
    r.add_get("/get_model_info", h.model_info)
    r.add_get("/server_info", h.server_info)
    r.add_get("/get_server_info", h.server_info)
    r.add_get("/metrics", h.metrics)
    r.add_route("GET", "/flush_cache", h.flush_cache)
    r.add_route("POST", "/flush_cache", h.flush_cache)
    r.add_post("/v1/chat/completions", h.chat)
    return app
