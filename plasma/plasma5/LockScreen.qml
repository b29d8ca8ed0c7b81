// SPDX-License-Identifier: Apache-2.0
// patternlock's lock screen for Plasma 5.27's kscreenlocker_greet (a
// Look-and-Feel package selected by kscreenlockerrc [Greeter] Theme): the
// greeter's PamAuthenticator given to PatternScreen.qml in its one form.
// 5.27: tryUnlock() starts a conversation; prompt(msg), promptForSecret(msg),
// infoMessage(msg), errorMessage(msg), succeeded(), failed() come from it.
import QtQuick 2.15

Item {
    id: root

    // Set by the greeter.
    property bool viewVisible: false
    property bool locked: false
    property bool suspendToRamSupported: false
    property bool suspendToDiskSupported: false
    signal suspendToRam()
    signal suspendToDisk()

    QtObject {
        id: adapter
        signal prompted(string text, bool secret)
        signal said(string text, bool error)
        signal succeeded()
        signal failed()
        readonly property bool startAgain: false
        function start() { authenticator.tryUnlock(); }
        function respond(text) { authenticator.respond(text); }
    }

    Connections {
        target: authenticator
        function onPrompt(msg) { adapter.prompted(msg, false); }
        function onPromptForSecret(msg) { adapter.prompted(msg, true); }
        function onInfoMessage(msg) { adapter.said(msg, false); }
        function onErrorMessage(msg) { adapter.said(msg, true); }
        function onSucceeded() { adapter.succeeded(); }
        function onFailed() { adapter.failed(); }
    }

    PatternScreen {
        anchors.fill: parent
        shown: root.viewVisible
        auth: adapter
        userName: kscreenlocker_userName
        userImage: kscreenlocker_userImage
        hidePath: typeof config !== "undefined" && config.hidePath === true
        keypadLayout: typeof config !== "undefined" && config.keypadLayout === "numpad" ? "numpad" : "phone"
        switchUserSource: Qt.resolvedUrl("SwitchUser.qml")
    }
}
