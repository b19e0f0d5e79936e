"""A headless Chromium driven over the DevTools protocol (aiohttp's websocket client): load a page at a
given window size, collect console errors and uncaught exceptions, evaluate an expression, screenshot."""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def chromium() -> str | None:
    return next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p), None)


@dataclass
class PageRun:
    errors: list[str]
    value: Any
    screenshot_png: bytes


async def _drive(ws_url: str, url: str, width: int, height: int, expression: str) -> PageRun:
    import aiohttp

    errors: list[str] = []
    async with aiohttp.ClientSession() as session, session.ws_connect(ws_url, max_msg_size=0) as ws:
        next_id = 0
        pending: dict[int, asyncio.Future[Any]] = {}
        loaded = asyncio.get_running_loop().create_future()

        async def reader() -> None:
            async for msg in ws:
                data = json.loads(msg.data)
                if "id" in data and data["id"] in pending:
                    pending.pop(data["id"]).set_result(data)
                method, params = data.get("method"), data.get("params", {})
                if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                    errors.append("console: " + " ".join(str(a.get("value", a.get("description")))
                                                         for a in params.get("args", [])))
                elif method == "Runtime.exceptionThrown":
                    errors.append("exception: " + str(params["exceptionDetails"].get("text")))
                elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                    errors.append("log: " + str(params["entry"].get("text")))
                elif method == "Page.loadEventFired" and not loaded.done():
                    loaded.set_result(True)

        async def call(method: str, **params: Any) -> Any:
            nonlocal next_id
            next_id += 1
            fut = asyncio.get_running_loop().create_future()
            pending[next_id] = fut
            await ws.send_str(json.dumps({"id": next_id, "method": method, "params": params}))
            reply = await asyncio.wait_for(fut, 30)
            if "error" in reply:
                raise RuntimeError(f"{method}: {reply['error']}")
            return reply["result"]

        task = asyncio.create_task(reader())
        for domain in ("Runtime", "Log", "Page"):
            await call(f"{domain}.enable")
        await call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                   mobile=False)
        await call("Page.navigate", url=url)
        await asyncio.wait_for(loaded, 30)
        await asyncio.sleep(0.5)   # late console messages
        value = (await call("Runtime.evaluate", expression=expression, returnByValue=True))["result"].get("value")
        shot = await call("Page.captureScreenshot", format="png", captureBeyondViewport=False)
        task.cancel()
        return PageRun(errors=errors, value=value, screenshot_png=base64.b64decode(shot["data"]))


def load_page(path: Path, profile_dir: Path, expression: str, width: int = 1400, height: int = 900) -> PageRun:
    binary = chromium()
    assert binary, "chromium not installed"
    proc = subprocess.Popen([binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                             "--disable-extensions", f"--user-data-dir={profile_dir}", "--remote-debugging-port=0",
                             f"--window-size={width},{height}", "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        port_file = profile_dir / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text().strip()):
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError(f"chromium did not start (exit {proc.poll()})")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as resp:
            targets = json.loads(resp.read())
        page = next(t for t in targets if t.get("type") == "page")
        return asyncio.run(_drive(page["webSocketDebuggerUrl"], path.resolve().as_uri(), width, height, expression))
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
