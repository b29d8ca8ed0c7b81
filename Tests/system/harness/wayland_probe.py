# SPDX-License-Identifier: Apache-2.0
"""A Wayland client of a few hundred lines, speaking the wire protocol itself
(no libwayland-client bindings are packaged for Python here), for the tests of
build/pl-test-compositor's own options: what its wl_output and wl_keyboard
send, and the keys its `key` and `type` commands press, read through the keymap
it sent with libxkbcommon (ctypes), as a real client reads them.

    probe = Probe(compositor)         # binds the globals, reads the first events
    probe.geometry                    # wl_output.geometry's fields
    probe.keymap.layouts()            # the keymap's layout names ("German")
    probe.lock()                      # a lock surface with a buffer: input goes to it
    compositor.ok("type zy")
    probe.keys()                      # the keys pressed since, decoded
"""
import ctypes
import ctypes.util
import mmap
import os
import socket
import struct

# The events of the interfaces the probe binds, by opcode: their arguments as
# u(int) i(nt) f(ixed) s(tring) o(bject) n(ew id) a(rray) h (a file descriptor).
EVENTS = {
    "wl_display": ["ous", "u"],
    "wl_registry": ["usu", "u"],
    "wl_callback": ["u"],
    "wl_compositor": [],
    "wl_shm": ["u"],
    "wl_shm_pool": [],
    "wl_buffer": [""],
    "wl_surface": ["o", "o", "i", "u"],
    "wl_seat": ["u", "s"],
    "wl_keyboard": ["uhu", "uoa", "uo", "uuuu", "uuuuu", "ii"],
    "wl_output": ["iiiiissi", "uiii", "", "i", "s", "s"],
    "ext_session_lock_manager_v1": [],
    "ext_session_lock_v1": ["", ""],
    "ext_session_lock_surface_v1": ["uuu"],
}
VERSIONS = {"wl_compositor": 4, "wl_shm": 1, "wl_seat": 5, "wl_output": 4,
            "ext_session_lock_manager_v1": 1}
KEY_PRESSED = 1
SHM_FORMAT_XRGB8888 = 1


class ProtocolError(AssertionError):
    pass


class Probe:
    """A client of `compositor` (harness.screen_support.Compositor) holding
    its globals, a wl_keyboard and wl_output's first events."""

    def __init__(self, compositor, timeout=10):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(str(compositor.runtime / compositor.socket))
        self._buffer = b""
        self._fds = []
        self._next_id = 2
        self.objects = {1: "wl_display"}
        self.globals = {}
        self.geometry = None
        self.mode = None
        self.keymap = None
        self.events = []  # (interface, opcode, args) of the keyboard and the lock
        self.registry = self._new("wl_registry")
        self._send(1, 1, "n", self.registry)
        self.roundtrip()
        self.bound = {name: self._bind(name) for name in VERSIONS}
        self.keyboard = self._new("wl_keyboard")
        self._send(self.bound["wl_seat"], 1, "n", self.keyboard)
        self.roundtrip()

    # ---- the wire ----------------------------------------------------------

    def _new(self, interface):
        oid = self._next_id
        self._next_id += 1
        self.objects[oid] = interface
        return oid

    def _bind(self, interface):
        assert interface in self.globals, f"pl-test-compositor offers no {interface}: {self.globals}"
        name, version = self.globals[interface]
        oid = self._new(interface)
        self._send(self.registry, 0, "usun", name, interface, min(version, VERSIONS[interface]), oid)
        return oid

    def _send(self, oid, opcode, signature, *args, fds=()):
        body = b""
        for kind, value in zip(signature, args):
            if kind == "s":
                raw = value.encode() + b"\0"
                body += struct.pack("=I", len(raw)) + raw + b"\0" * (-len(raw) % 4)
            elif kind == "i":
                body += struct.pack("=i", value)
            else:
                body += struct.pack("=I", value)
        header = struct.pack("=II", oid, (8 + len(body)) << 16 | opcode)
        if fds:
            self.sock.sendmsg([header + body], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                                 struct.pack(f"={len(fds)}i", *fds))])
        else:
            self.sock.sendall(header + body)

    def _receive(self):
        data, fds, _, _ = socket.recv_fds(self.sock, 65536, 16)
        if not data:
            raise ProtocolError("pl-test-compositor closed the connection")
        self._buffer += data
        self._fds += fds

    def _dispatch_one(self):
        while len(self._buffer) < 8:
            self._receive()
        oid, word = struct.unpack_from("=II", self._buffer)
        size, opcode = word >> 16, word & 0xFFFF
        while len(self._buffer) < size:
            self._receive()
        body, self._buffer = self._buffer[8:size], self._buffer[size:]
        interface = self.objects.get(oid)
        assert interface, f"an event for object {oid}, which the probe never made"
        args, at = [], 0
        for kind in EVENTS[interface][opcode]:
            if kind == "h":
                args.append(self._fds.pop(0))
                continue
            (value,) = struct.unpack_from("=i" if kind in "if" else "=I", body, at)
            at += 4
            if kind in "sa":
                raw = body[at:at + value]
                at += value + (-value % 4)
                value = raw[:-1].decode() if kind == "s" else raw
            args.append(value)
        self._handle(interface, oid, opcode, args)

    def roundtrip(self):
        """Sends wl_display.sync and handles every event up to its done: all
        the compositor sent before it handled the probe's requests so far."""
        callback = self._new("wl_callback")
        self._send(1, 0, "n", callback)
        self._done = None
        while self._done != callback:
            self._dispatch_one()

    def _handle(self, interface, oid, opcode, args):
        if interface == "wl_display" and opcode == 0:
            raise ProtocolError(f"protocol error on {self.objects.get(args[0])}: {args[2]} (code {args[1]})")
        if interface == "wl_display" and opcode == 1:
            self.objects.pop(args[0], None)
        elif interface == "wl_callback":
            self._done = oid
        elif interface == "wl_registry" and opcode == 0:
            self.globals[args[1]] = (args[0], args[2])
        elif interface == "wl_output" and opcode == 0:
            self.geometry = dict(zip(("x", "y", "physical_width", "physical_height", "subpixel",
                                      "make", "model", "transform"), args))
        elif interface == "wl_output" and opcode == 1:
            self.mode = dict(zip(("flags", "width", "height", "refresh"), args))
        elif interface == "wl_keyboard" and opcode == 0:
            _, fd, size = args
            try:
                with mmap.mmap(fd, size, prot=mmap.PROT_READ) as text:
                    self.keymap = Keymap(bytes(text).rstrip(b"\0"))
            finally:
                os.close(fd)
        elif interface in ("wl_keyboard", "ext_session_lock_v1", "ext_session_lock_surface_v1"):
            self.events.append((interface, opcode, args))

    # ---- a lock surface ------------------------------------------------------

    def lock(self):
        """Locks the session with a lock surface of the configured size and
        commits a black buffer to it: the compositor then sends input to it."""
        lock = self._new("ext_session_lock_v1")
        self._send(self.bound["ext_session_lock_manager_v1"], 1, "n", lock)
        surface = self._new("wl_surface")
        self._send(self.bound["wl_compositor"], 0, "n", surface)
        lock_surface = self._new("ext_session_lock_surface_v1")
        self._send(lock, 1, "noo", lock_surface, surface, self.bound["wl_output"])
        self.roundtrip()
        configures = [args for (interface, _, args) in self.events if interface == "ext_session_lock_surface_v1"]
        assert configures, f"no configure for the lock surface: {self.events}"
        serial, width, height = configures[-1]
        self._send(lock_surface, 1, "u", serial)
        stride = width * 4
        fd = os.memfd_create("pl-probe", os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, stride * height)
            pool = self._new("wl_shm_pool")
            self._send(self.bound["wl_shm"], 0, "ni", pool, stride * height, fds=(fd,))
        finally:
            os.close(fd)
        buffer = self._new("wl_buffer")
        self._send(pool, 0, "niiiiu", buffer, 0, width, height, stride, SHM_FORMAT_XRGB8888)
        self._send(surface, 1, "oii", buffer, 0, 0)
        self._send(surface, 6, "")
        self.roundtrip()
        self.events.clear()

    def keys(self):
        """The keys pressed since the last call, each as (evdev code, the
        keysym's name the client's xkb state gives, the modifiers' names
        depressed when it was pressed), and the depressed modifiers left at
        the end."""
        self.roundtrip()
        assert self.keymap, "the compositor sent no keymap"
        pressed, depressed, group = [], 0, 0
        for interface, opcode, args in self.events:
            if interface != "wl_keyboard":
                continue
            if opcode == 4:
                depressed, group = args[1], args[4]
            elif opcode == 3 and args[3] == KEY_PRESSED:
                pressed.append((args[2], self.keymap.sym_name(args[2], depressed, group),
                                self.keymap.mod_names(depressed)))
        self.events.clear()
        return pressed, self.keymap.mod_names(depressed)

    def close(self):
        self.sock.close()


# ---- the keymap, read as a client reads it ------------------------------------

_xkb = None


def _libxkbcommon():
    global _xkb
    if _xkb is None:
        x = ctypes.CDLL(ctypes.util.find_library("xkbcommon") or "libxkbcommon.so.0")
        p, u = ctypes.c_void_p, ctypes.c_uint32
        for name, restype, argtypes in (
                ("xkb_context_new", p, [ctypes.c_int]),
                ("xkb_context_unref", None, [p]),
                ("xkb_keymap_new_from_string", p, [p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]),
                ("xkb_keymap_unref", None, [p]),
                ("xkb_keymap_num_layouts", u, [p]),
                ("xkb_keymap_layout_get_name", ctypes.c_char_p, [p, u]),
                ("xkb_keymap_num_mods", u, [p]),
                ("xkb_keymap_mod_get_name", ctypes.c_char_p, [p, u]),
                ("xkb_state_new", p, [p]),
                ("xkb_state_unref", None, [p]),
                ("xkb_state_update_mask", ctypes.c_int, [p, u, u, u, u, u, u]),
                ("xkb_state_key_get_one_sym", u, [p, u]),
                ("xkb_keysym_get_name", ctypes.c_int, [u, ctypes.c_char_p, ctypes.c_size_t])):
            f = getattr(x, name)
            f.restype = restype
            f.argtypes = argtypes
        _xkb = x
    return _xkb


class Keymap:
    """A keymap's text, compiled by libxkbcommon as a client compiles it."""

    def __init__(self, text):
        x = _libxkbcommon()
        self.text = text.decode()
        context = x.xkb_context_new(0)
        try:
            self._keymap = x.xkb_keymap_new_from_string(context, text, 1, 0)
        finally:
            x.xkb_context_unref(context)
        assert self._keymap, "libxkbcommon cannot compile the keymap the compositor sent"

    def layouts(self):
        x = _libxkbcommon()
        return [x.xkb_keymap_layout_get_name(self._keymap, i).decode()
                for i in range(x.xkb_keymap_num_layouts(self._keymap))]

    def mod_names(self, mask):
        x = _libxkbcommon()
        return sorted(x.xkb_keymap_mod_get_name(self._keymap, i).decode()
                      for i in range(x.xkb_keymap_num_mods(self._keymap)) if mask >> i & 1)

    def sym_name(self, evdev_code, depressed, group):
        """The keysym a client gets for the key with `depressed` modifiers in
        layout `group`, by name."""
        x = _libxkbcommon()
        state = x.xkb_state_new(self._keymap)
        try:
            x.xkb_state_update_mask(state, depressed, 0, 0, 0, 0, group)
            sym = x.xkb_state_key_get_one_sym(state, evdev_code + 8)
        finally:
            x.xkb_state_unref(state)
        name = ctypes.create_string_buffer(64)
        x.xkb_keysym_get_name(sym, name, len(name))
        return name.value.decode()

    def __del__(self):
        if getattr(self, "_keymap", None):
            _libxkbcommon().xkb_keymap_unref(self._keymap)
