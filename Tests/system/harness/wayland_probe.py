# SPDX-License-Identifier: Apache-2.0
"""A Wayland client of a few hundred lines, speaking the wire protocol itself
(no libwayland-client bindings are packaged for Python here), for the tests of
build/pl-test-compositor itself: what its wl_output and wl_keyboard send, the
keys its `key` and `type` commands press, read through the keymap it sent with
libxkbcommon (ctypes), as a real client reads them, and an xdg_toplevel window
of the kind patternlock-setup shows, with the protocol errors a client's
misuse earns.

    probe = Probe(compositor)         # binds the globals, reads the first events
    probe.geometry                    # wl_output.geometry's fields
    probe.keymap.layouts()            # the keymap's layout names ("German")
    probe.lock()                      # a lock surface with a buffer: input goes to it
    compositor.ok("type zy")
    probe.keys()                      # the keys pressed since, decoded

    window = Window(probe, title="Draw")  # an xdg_toplevel, its initial commit made
    window.configures[-1]             # {"serial", "width", "height", "states", ...}
    window.ack()                      # ack_configure the last one
    window.draw(320, 240)             # a buffer attached and committed: it maps
    compositor.ok("touch down 0 10 20")
    probe.touches()                   # the wl_touch events since, on which surface

A protocol error the compositor sends raises ProtocolError, which names the
object's interface and the error's code.
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
    "wl_pointer": ["uoff", "uo", "uff", "uuuu", "uuf", "", "u", "uu", "ui"],
    "wl_touch": ["uuoiff", "uui", "uiff", "", "", "iff", "if"],
    "wl_output": ["iiiiissi", "uiii", "", "i", "s", "s"],
    "ext_session_lock_manager_v1": [],
    "ext_session_lock_v1": ["", ""],
    "ext_session_lock_surface_v1": ["uuu"],
    "xdg_wm_base": ["u"],
    "xdg_positioner": [],
    "xdg_surface": ["u"],
    "xdg_toplevel": ["iia", "", "ii", "a"],
    "xdg_popup": ["iiii", "", "u"],
}
VERSIONS = {"wl_compositor": 4, "wl_shm": 1, "wl_seat": 5, "wl_output": 4,
            "ext_session_lock_manager_v1": 1, "xdg_wm_base": 5}
KEY_PRESSED = 1
SHM_FORMAT_XRGB8888 = 1
# The events the probe keeps in `events`, in order, for the tests to read.
KEPT = ("wl_keyboard", "wl_pointer", "wl_touch", "ext_session_lock_v1", "ext_session_lock_surface_v1")
# xdg_toplevel's states (the configure's array)
STATES = {1: "maximized", 2: "fullscreen", 3: "resizing", 4: "activated",
          5: "tiled_left", 6: "tiled_right", 7: "tiled_top", 8: "tiled_bottom"}


class ProtocolError(AssertionError):
    """wl_display.error: `interface` and `code` say which error of which
    object's interface (xdg_surface, 3: unconfigured_buffer)."""

    def __init__(self, message, interface=None, code=None):
        super().__init__(message)
        self.interface = interface
        self.code = code


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
        self.events = []  # (interface, opcode, args) of the KEPT interfaces
        self.handlers = {}  # object id: what handles its events (a Window)
        self.pings = []  # the serials of xdg_wm_base.ping, each answered unless
        self.answer_pings = True  # this is False
        self.lock_object = None
        self.registry = self._new("wl_registry")
        self._send(1, 1, "n", self.registry)
        self.roundtrip()
        self.bound = {name: self._bind(name) for name in VERSIONS}
        self.pointer = self._new("wl_pointer")
        self._send(self.bound["wl_seat"], 0, "n", self.pointer)
        self.keyboard = self._new("wl_keyboard")
        self._send(self.bound["wl_seat"], 1, "n", self.keyboard)
        self.touch = self._new("wl_touch")
        self._send(self.bound["wl_seat"], 2, "n", self.touch)
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
        """A request: its arguments as u(int) i(nt) s(tring) o(bject, 0 for
        null) n(ew id), and the file descriptors it passes."""
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
        try:
            if fds:
                self.sock.sendmsg([header + body], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                                     struct.pack(f"={len(fds)}i", *fds))])
            else:
                self.sock.sendall(header + body)
        except (BrokenPipeError, ConnectionResetError):
            # The compositor sent a protocol error and hung up: the error
            # waits to be read.
            while True:
                self._dispatch_one()

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
            if kind == "f":
                value /= 256
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

    def dispatch_until(self, condition):
        """Handles events as they come until `condition()` holds (an event
        the compositor sends on a control command of its own time: a ping);
        the socket's timeout otherwise."""
        while not condition():
            self._dispatch_one()

    def _handle(self, interface, oid, opcode, args):
        if interface == "wl_display" and opcode == 0:
            culprit = self.objects.get(args[0])
            raise ProtocolError(f"protocol error on {culprit}: {args[2]} (code {args[1]})", culprit, args[1])
        if oid in self.handlers:
            self.handlers[oid].event(interface, opcode, args)
        elif interface == "xdg_wm_base" and opcode == 0:
            self.pings.append(args[0])
            if self.answer_pings:
                self._send(oid, 3, "u", args[0])
        elif interface == "wl_display" and opcode == 1:
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
        elif interface in KEPT:
            self.events.append((interface, opcode, args))

    # ---- surfaces and buffers ----------------------------------------------------

    def surface(self):
        """A new wl_surface's id."""
        surface = self._new("wl_surface")
        self._send(self.bound["wl_compositor"], 0, "n", surface)
        return surface

    def buffer(self, width, height, background=(0, 0, 0), rects=()):
        """A new XRGB8888 wl_buffer of `width` x `height` pixels: the
        `background` colour (r, g, b), then each of `rects` (x, y, w, h,
        (r, g, b)) painted over it, in pixels."""
        stride = width * 4

        def word(rgb):
            return struct.pack("=I", rgb[0] << 16 | rgb[1] << 8 | rgb[2])
        pixels = bytearray(word(background) * (width * height))
        for x, y, w, h, rgb in rects:
            row = word(rgb) * w
            for line in range(y, y + h):
                pixels[line * stride + x * 4:line * stride + (x + w) * 4] = row
        fd = os.memfd_create("pl-probe", os.MFD_CLOEXEC)
        try:
            os.write(fd, pixels)
            pool = self._new("wl_shm_pool")
            self._send(self.bound["wl_shm"], 0, "ni", pool, len(pixels), fds=(fd,))
        finally:
            os.close(fd)
        buffer = self._new("wl_buffer")
        self._send(pool, 0, "niiiiu", buffer, 0, width, height, stride, SHM_FORMAT_XRGB8888)
        self._send(pool, 1, "")  # the buffer keeps the memory
        return buffer

    def attach(self, surface, buffer, scale=1):
        """wl_surface.set_buffer_scale, attach (0 for a null buffer) and commit."""
        self._send(surface, 8, "i", scale)
        self._send(surface, 1, "oii", buffer, 0, 0)
        self._send(surface, 6, "")

    def commit(self, surface):
        self._send(surface, 6, "")

    # ---- a lock surface ------------------------------------------------------

    def lock(self):
        """Locks the session with a lock surface of the configured size and
        commits a black buffer to it: the compositor then sends input to it."""
        self.lock_object = lock = self._new("ext_session_lock_v1")
        self._send(self.bound["ext_session_lock_manager_v1"], 1, "n", lock)
        self.lock_surface = surface = self.surface()
        lock_surface = self._new("ext_session_lock_surface_v1")
        self._send(lock, 1, "noo", lock_surface, surface, self.bound["wl_output"])
        self.roundtrip()
        configures = [args for (interface, _, args) in self.events if interface == "ext_session_lock_surface_v1"]
        assert configures, f"no configure for the lock surface: {self.events}"
        serial, width, height = configures[-1]
        self._send(lock_surface, 1, "u", serial)
        self.attach(surface, self.buffer(width, height))
        self.roundtrip()
        self.events.clear()

    def unlock(self):
        """unlock_and_destroy on the lock lock() took."""
        self._send(self.lock_object, 2, "")
        self.roundtrip()

    # ---- input, as it came -------------------------------------------------------

    def _take(self, interface):
        self.roundtrip()
        taken = [(opcode, args) for (kind, opcode, args) in self.events if kind == interface]
        self.events = [e for e in self.events if e[0] != interface]
        return taken

    def touches(self):
        """The wl_touch events since the last call, by name: ("down", surface,
        id, x, y), ("motion", id, x, y), ("up", id), ("cancel",); frames left
        out."""
        out = []
        for opcode, args in self._take("wl_touch"):
            if opcode == 0:
                out.append(("down", args[2], args[3], args[4], args[5]))
            elif opcode == 1:
                out.append(("up", args[2]))
            elif opcode == 2:
                out.append(("motion", args[1], args[2], args[3]))
            elif opcode == 4:
                out.append(("cancel",))
        return out

    def pointer_events(self):
        """The wl_pointer events since the last call: ("enter", surface, x, y),
        ("leave", surface), ("motion", x, y), ("button", code, state)."""
        out = []
        for opcode, args in self._take("wl_pointer"):
            if opcode == 0:
                out.append(("enter", args[1], args[2], args[3]))
            elif opcode == 1:
                out.append(("leave", args[1]))
            elif opcode == 2:
                out.append(("motion", args[1], args[2]))
            elif opcode == 3:
                out.append(("button", args[2], args[3]))
        return out

    def focus(self):
        """The keyboard's enter and leave events since the last call, as
        ("enter", surface) and ("leave", surface); its other events stay for
        keys()."""
        self.roundtrip()
        out = [("enter" if opcode == 1 else "leave", args[1]) for (kind, opcode, args) in self.events
               if kind == "wl_keyboard" and opcode in (1, 2)]
        self.events = [e for e in self.events if not (e[0] == "wl_keyboard" and e[1] in (1, 2))]
        return out

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


class Window:
    """An xdg_toplevel of `probe`'s: its wl_surface, xdg_surface and role
    object made, `title` and `app_id` set, and (unless `initial_commit` is
    False) the initial commit without a buffer made and its configure read.
    `configures` holds each configure sequence, as {"serial", "width",
    "height", "states" (names), "bounds" (w, h) or None, "capabilities"
    (list) or None}; `closes` counts xdg_toplevel.close."""

    def __init__(self, probe, title=None, app_id=None, initial_commit=True):
        self.probe = probe
        self.surface = probe.surface()
        self.xdg_surface = probe._new("xdg_surface")
        probe._send(probe.bound["xdg_wm_base"], 2, "no", self.xdg_surface, self.surface)
        self.toplevel = probe._new("xdg_toplevel")
        probe._send(self.xdg_surface, 1, "n", self.toplevel)
        probe.handlers[self.xdg_surface] = probe.handlers[self.toplevel] = self
        self.configures = []
        self.closes = 0
        self._latched = {}
        if title is not None:
            probe._send(self.toplevel, 2, "s", title)
        if app_id is not None:
            probe._send(self.toplevel, 3, "s", app_id)
        if initial_commit:
            probe.commit(self.surface)
            probe.roundtrip()

    def event(self, interface, opcode, args):
        if interface == "xdg_toplevel" and opcode == 0:
            states = struct.unpack(f"={len(args[2]) // 4}I", args[2])
            self._latched.update(width=args[0], height=args[1], states=[STATES.get(s, s) for s in states])
        elif interface == "xdg_toplevel" and opcode == 1:
            self.closes += 1
        elif interface == "xdg_toplevel" and opcode == 2:
            self._latched["bounds"] = (args[0], args[1])
        elif interface == "xdg_toplevel" and opcode == 3:
            self._latched["capabilities"] = list(struct.unpack(f"={len(args[0]) // 4}I", args[0]))
        elif interface == "xdg_surface" and opcode == 0:
            done = {"bounds": None, "capabilities": None, **self._latched, "serial": args[0]}
            self.configures.append(done)
            self._latched = {}

    def ack(self, serial=None):
        """ack_configure the last configure's serial (or `serial`)."""
        self.probe._send(self.xdg_surface, 4, "u", self.configures[-1]["serial"] if serial is None else serial)

    def draw(self, width=None, height=None, scale=1, background=(0x20, 0x40, 0x60), rects=(), roundtrip=True):
        """A buffer of `width` x `height` surface units (the last configure's
        size) at `scale`, attached and committed; see Probe.buffer."""
        width = self.configures[-1]["width"] if width is None else width
        height = self.configures[-1]["height"] if height is None else height
        self.probe.attach(self.surface, self.probe.buffer(width * scale, height * scale, background, rects), scale)
        if roundtrip:
            self.probe.roundtrip()

    def set_window_geometry(self, x, y, width, height):
        self.probe._send(self.xdg_surface, 3, "iiii", x, y, width, height)

    def destroy(self):
        """The toplevel, then the xdg_surface, then the wl_surface: the
        order the protocol asks for."""
        self.probe._send(self.toplevel, 0, "")
        self.probe._send(self.xdg_surface, 0, "")
        self.probe._send(self.surface, 0, "")
        self.probe.roundtrip()


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
