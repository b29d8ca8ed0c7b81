// SPDX-License-Identifier: Apache-2.0
// The on-screen keyboard on X11: Qt's virtual keyboard (the greeter sets
// QT_IM_MODULE=qtvirtualkeyboard), shown while asked for and the field has focus.
// Loaded apart by PatternScreen.qml: without QtQuick.VirtualKeyboard it does not load.
import QtQuick 2.15
import QtQuick.VirtualKeyboard 2.4

InputPanel {
    // As wide as the screen (the Loader takes the panel's own size).
    width: parent && parent.parent ? parent.parent.width : 0
    property bool activated: false
    active: activated && Qt.inputMethod.visible
    visible: active
}
