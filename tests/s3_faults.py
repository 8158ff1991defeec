"""Fault injection for the object-storage tests: moto's S3 server (its real WSGI app, on 127.0.0.1) with a
gate that holds one chosen request, before moto sees it or after moto answered it, until the test lets it
go; and a loopback endpoint that accepts connections and never answers.

Holding one request of one importer while another runs whole forces the interleavings a race needs, on
the real code path, every time (no sleeps, no luck).
"""

from __future__ import annotations

import re
import socket
import threading

HOLD_LIMIT_S = 180  # a hold never outlives a test that forgot to release it


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Hold:
    """The first request matching `method` and `path` (a regex on the URL path, /bucket/key): held before
    moto handles it (`when="request"`), or handled and its answer held (`when="response"`)."""

    def __init__(self, method: str, path: str, when: str):
        self.method, self.path, self.when = method, re.compile(path), when
        self.arrived, self.release = threading.Event(), threading.Event()
        self.taken = False


def gated_moto_server():
    """A started ThreadedMotoServer whose `hold(method, path, when)` returns a Hold."""
    from moto.moto_server.threaded_moto_server import ThreadedMotoServer
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from werkzeug.serving import make_server

    class GatedMotoServer(ThreadedMotoServer):
        def __init__(self):
            super().__init__(ip_address="127.0.0.1", port=free_port(), verbose=False)
            self.holds: list[Hold] = []
            self.lock = threading.Lock()

        def hold(self, method: str, path: str, when: str = "response") -> Hold:
            hold = Hold(method, path, when)
            with self.lock:
                self.holds.append(hold)
            return hold

        def _take(self, method: str, path: str) -> Hold | None:
            with self.lock:
                for hold in self.holds:
                    if not hold.taken and hold.method == method and hold.path.search(path):
                        hold.taken = True
                        return hold
            return None

        def _gate(self, app):
            def gated(environ, start_response):
                hold = self._take(environ["REQUEST_METHOD"], environ.get("PATH_INFO", ""))
                if hold is None:
                    return app(environ, start_response)
                if hold.when == "request":
                    hold.arrived.set()
                    hold.release.wait(HOLD_LIMIT_S)
                    return app(environ, start_response)
                answer: dict = {"written": []}

                def capture(status, headers, exc_info=None):
                    answer["start"] = (status, headers)
                    return answer["written"].append

                body = list(app(environ, capture))  # moto has done the work: only the answer waits
                hold.arrived.set()
                hold.release.wait(HOLD_LIMIT_S)
                write = start_response(*answer["start"])
                for data in answer["written"]:
                    write(data)
                return body

            return gated

        def _server_entry(self) -> None:
            app = DomainDispatcherApplication(create_backend_app)
            self._server = make_server(
                self._ip_address, self._port, self._gate(app), True, request_handler=MotoRequestHandler
            )
            self._server_ready_event.set()
            self._server.serve_forever()

        def release_all(self) -> None:
            with self.lock:
                for hold in self.holds:
                    hold.release.set()

    server = GatedMotoServer()
    server.start()
    return server


class SilentEndpoint:
    """127.0.0.1:<port> accepts every connection and never sends a byte."""

    def __init__(self):
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(64)
        self.url = f"http://127.0.0.1:{self.socket.getsockname()[1]}"
        self.accepted: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.accepted.append(connection)  # kept open, never read, never answered

    def close(self) -> None:
        self.socket.close()
        for connection in self.accepted:
            connection.close()
