// SPDX-License-Identifier: Apache-2.0
// Plasma 5.27's Switch User, as Breeze has it: shown where a new session may
// be started and switched to, it starts one at the display manager's greeter
// (the screen stays locked). Loaded apart by PatternScreen.qml: if the
// sessions module is missing, only this button is.
import QtQuick 2.15
import QtQuick.Controls 2.15
import org.kde.plasma.private.sessions 2.0

Button {
    visible: sessions.canStartNewSession && sessions.canSwitchUser
    text: "Switch User"
    onClicked: sessions.startNewSession(true)

    SessionsModel {
        id: sessions
        showNewSessionEntry: false
    }
}
