#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Prints the directory this system's PAM loads modules from (where pam_unix.so
# lives): pkg-config's pam first, then the usual multiarch and lib64 places.
multiarch=$( (dpkg-architecture -qDEB_HOST_MULTIARCH || gcc -print-multiarch) 2>/dev/null)
libdir=$(pkg-config --variable=libdir pam 2>/dev/null)
for dir in \
    "$(pkg-config --variable=securedir pam 2>/dev/null)" \
    "${libdir:+$libdir/security}" \
    "${multiarch:+/usr/lib/$multiarch/security}" \
    "${multiarch:+/lib/$multiarch/security}" \
    /usr/lib64/security /lib64/security /usr/lib/security /lib/security
do
    if [ -n "$dir" ] && [ -e "$dir/pam_unix.so" ]; then
        echo "$dir"
        exit 0
    fi
done
# No pam_unix.so anywhere (a build host without PAM modules): trust pkg-config.
if [ -n "$libdir" ]; then echo "$libdir/security"; else echo /lib/security; fi
