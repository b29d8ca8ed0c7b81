# SPDX-License-Identifier: Apache-2.0
"""client_system (the booted container of conftest) with the helpers the tests
of the real clients share: users, the daemon's journal lines, SSH and login
sessions."""
import re


class Clients:
    """client_system with the helpers these tests share."""

    def __init__(self, system):
        self.system = system

    def user(self, prefix, password, pattern=None, sudo=False):
        name = self.system.add_user(prefix, password)
        if pattern:
            self.system.ok(f"patternlockd enroll {name}", input=f"{pattern}\n{pattern}\n")
        if sudo:
            self.system.ok(f"echo '{name} ALL=(ALL) ALL' > /etc/sudoers.d/{name} && chmod 440 /etc/sudoers.d/{name}")
        return name

    def daemon_lines(self, user):
        """patternlockd's journal lines about user (every request it answers is logged)."""
        out = self.system.ok("journalctl -u patternlockd.service -o cat --no-pager")
        return [line for line in out.splitlines() if f" user={user} " in f" {line} "]

    def failures(self, user):
        out = self.system.run(f"patternlockd status {user}").stdout
        m = re.search(r"enrolled, (\d+) failures?", out)
        return int(m.group(1)) if m else None

    def uid(self, user):
        return int(self.system.ok(f"id -u {user}"))

    def ssh(self, user):
        """argv of an SSH login as user to the container's own sshd on
        127.0.0.1:2222 (started once; key login only), for the pty driver."""
        self.system.ok("mkdir -p /run/sshd && (ss -ltn | grep -q 127.0.0.1:2222 || "
                       "/usr/sbin/sshd -p 2222 -o ListenAddress=127.0.0.1 -o PasswordAuthentication=no)")
        self.system.ok(f"runuser -u {user} -- ssh-keygen -q -t ed25519 -N '' -f /home/{user}/.ssh/id_ed25519 && "
                       f"cp /home/{user}/.ssh/id_ed25519.pub /home/{user}/.ssh/authorized_keys && "
                       f"chown {user}: /home/{user}/.ssh/authorized_keys")
        return ["runuser", "-u", user, "--", "ssh", "-tt", "-p", "2222", "-o", "StrictHostKeyChecking=no",
                "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", f"{user}@127.0.0.1"]

    def session(self, user, password, commands, pattern_prompt=False, timeout=60):
        """Logs user in with `login` on a pty (a local logind session) and runs the
        steps of each command at the prompt; returns the transcript."""
        s = self.system
        steps = s.login_steps(user, password, pattern_prompt)
        for command in commands:
            steps += command + [["expect", r"\n" + s.PROMPT]]
        rc, out = s.pty(["login", user], steps + [["send", "exit\n"], ["eof"]], timeout=timeout)
        assert rc == 0, out
        return out
