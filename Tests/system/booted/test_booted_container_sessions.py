# SPDX-License-Identifier: Apache-2.0
"""The shared booted container of booted.py works as the client tests need it:
`login` on a pty makes a real local logind session, and the real clients are
there."""


def test_login_on_a_pty_opens_a_local_logind_session(client_system):
    system = client_system
    user = system.add_user("plbt", "Sesame-42-open")
    rc, out = system.pty(["login", user], system.session_steps(user, "Sesame-42-open", [
        ("loginctl show-session $XDG_SESSION_ID -p Remote -p Type -p Active", r"Remote=no\r?\nType=tty\r?\nActive=yes"),
        ("id -un", user),
    ]))
    assert rc == 0, out


def test_the_real_clients_are_installed_and_patternlock_is_in_common_auth(client_system):
    out = client_system.ok("command -v pkttyagent pkcheck pkexec testsaslauthd; ls /usr/sbin/sshd /usr/sbin/saslauthd "
                           "/usr/lib/polkit-1/polkit-agent-helper-1; grep -c pam_patternlock /etc/pam.d/common-auth")
    assert out.split()[-1] == "1", out
    assert client_system.ok("systemctl is-active patternlockd.socket").strip() == "active"
