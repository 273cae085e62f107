"""A direct connection between the client and the workers' actors, beside Dask's.

A Dask actor call goes from the client's thread to its event loop, over Dask's protocol to
the worker's event loop and on to the actor's thread, and back the same way: about 3 ms a
call on two busy cores, for a few kilobytes.  Each actor of :mod:`.actors` also listens on
a TCP port of its worker's host, and the client and the other actors connect to it: a
message is one pickle, sent at once (``TCP_NODELAY``), and a call costs about 0.3 ms.
Connections are authenticated with a key made for the run (the HMAC challenge of
:mod:`multiprocessing.connection`), which travels to the actors with their Dask tasks.

Only workers with a plain ``tcp://`` address, or in the client's process, listen (a TLS
cluster keeps Dask's calls, as does a run whose client cannot connect).
"""

from __future__ import annotations

import pickle
import socket
import threading
from multiprocessing.connection import Client, Listener


def _no_delay(conn):
    """Send small messages at once (no Nagle delay: 40 ms a reply without it)."""
    sock = socket.socket(fileno=conn.fileno())
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    finally:
        sock.detach()  # the connection keeps its descriptor
    return conn


def connect(address, key: bytes):
    """A connection to a listening actor."""
    return _no_delay(Client(tuple(address), authkey=key))


def send(conn, obj):
    conn.send_bytes(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def receive(conn):
    return pickle.loads(conn.recv_bytes())


def host_of(address: str) -> str | None:
    """The host of a worker's ``tcp://host:port`` address, the loopback for a worker in
    this process (``inproc://``), None for another protocol."""
    if address.startswith("inproc://"):
        return "127.0.0.1"
    if not address.startswith("tcp://"):
        return None
    host = address[len("tcp://"):].rsplit(":", 1)[0]
    return host.strip("[]")


class Listening:
    """An actor's listener: ``on_call(message)`` answers the client's connection,
    ``on_push(message)`` takes the other actors' pushes.  A connection says which it is
    first (``"client"`` or ``"peer"``); each runs on a thread of its own.  The client's
    connection closing (its run ended, or it gave the actor up) closes everything."""

    def __init__(self, host: str, key: bytes, on_call, on_push):
        self._listener = Listener((host, 0), authkey=key)
        self.address = self._listener.address
        self._on_call, self._on_push = on_call, on_push
        self._conns = []
        self.closed = False
        threading.Thread(target=self._accept, daemon=True, name="dpclust-listen").start()

    def _accept(self):
        while not self.closed:
            try:
                conn = _no_delay(self._listener.accept())
            except Exception:  # closed, or a connection that failed the challenge
                if self.closed:
                    return
                continue
            self._conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True,
                             name="dpclust-conn").start()

    def _serve(self, conn):
        role = None
        try:
            role = receive(conn)
            while True:
                message = receive(conn)
                if role == "peer":
                    self._on_push(message)
                    continue
                try:
                    answer = ("ok", self._on_call(message))
                except Exception as exc:  # the client raises it
                    answer = ("error", exc)
                send(conn, answer)
        except (EOFError, OSError):
            if role == "client":
                self.close()

    def close(self):
        self.closed = True
        for c in [self._listener, *self._conns]:
            try:
                c.close()
            except Exception:
                pass


__all__ = ["Listening", "connect", "host_of", "receive", "send"]
