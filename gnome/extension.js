// SPDX-License-Identifier: Apache-2.0
// Pattern Unlock for GNOME Shell: the grid on GNOME's own dialogs where
// pam_patternlock asks, the unlock dialog (through GDM) and the polkit dialog
// (pkexec, Settings, Software). GNOME keeps its dialogs: the user, the
// messages, the password field (one tap away: "Use password"), the retries.
// What is answered to which prompt is conversation.js's (js/Conversation.js,
// the one conversation of every screen, checked against the Swift lock screen
// in make check): a drawn pattern answers only the module's own prompt, and a
// password typed in the field never reaches the daemon, whatever its
// characters.
//
// The names reached here are GNOME Shell 48's own (metadata.json lists only
// the versions this was tested with): AuthPrompt's _userVerifier, _entry,
// _mainBox, _activateNext and UnlockDialog's _ensureAuthPrompt; the polkit
// agent component, its _currentDialog's _passwordEntry, _session,
// _initiateSession and message labels. Anything that fails here takes the
// grid away and leaves GNOME's dialog as it is without the extension: the
// pattern typed as its dots, the password.
import Clutter from 'gi://Clutter';
import GLib from 'gi://GLib';
import PolkitAgent from 'gi://PolkitAgent';
import St from 'gi://St';

import {Extension, InjectionManager} from 'resource:///org/gnome/shell/extensions/extension.js';
import * as AuthPrompt from 'resource:///org/gnome/shell/gdm/authPrompt.js';
import * as GdmUtil from 'resource:///org/gnome/shell/gdm/util.js';
import * as Main from 'resource:///org/gnome/shell/ui/main.js';
import * as UnlockDialog from 'resource:///org/gnome/shell/ui/unlockDialog.js';

import * as Conv from './conversation.js';
import {PatternGrid} from './grid.js';

const GRID_SIDE = 240;
// A wrong pattern stays red this long (the lock screen's second).
const FLASH_MS = 1000;

function log(text) {
    console.log(`patternlock-gnome: ${text}`);
}

// GNOME's unlock dialog: one AuthPrompt, whose verifier talks to GDM.
class UnlockHost {
    constructor(prompt) {
        this.name = 'unlock';
        this.prompt = prompt;
        this._activate = AuthPrompt.AuthPrompt.prototype._activateNext;
    }

    static fits(prompt) {
        return prompt?._userVerifier && prompt._entry && prompt._mainBox &&
            typeof AuthPrompt.AuthPrompt.prototype._activateNext === 'function';
    }

    get actor() {
        return this.prompt;
    }

    // GNOME swaps a password entry and a text entry: the one showing.
    get field() {
        return this.prompt._entry;
    }

    get fieldRow() {
        return this.prompt._mainBox;
    }

    place(grid, button) {
        this.prompt.insert_child_below(grid, this.prompt._mainBox);
        this.prompt.insert_child_above(button, this.prompt._mainBox);
    }

    // Every answer GNOME would send (Enter in its field) comes to `entered`
    // instead, with the field's text; the attachment's own go out by respond.
    install(events, watch) {
        const verifier = this.prompt._userVerifier;
        // The conversation is the foreground service's (gdm-password), not a
        // fingerprint or smartcard reader's beside it.
        const foreground = service => !service || verifier.serviceIsForeground(service);
        watch(verifier, 'ask-question', (_v, _service, question) => events.asked(question));
        watch(verifier, 'show-message', (_v, service, message) => foreground(service) && events.said(message));
        watch(verifier, 'verification-failed', (_v, service) => foreground(service) && events.ended(false));
        watch(verifier, 'verification-complete', () => events.ended(true));
        watch(verifier, 'reset', () => events.restarted());
        // Escape or the idle timeout cancels and begins again without the
        // verifier's reset: a new conversation too.
        watch(this.prompt, 'reset', () => events.restarted());
        this.prompt._activateNext = () => events.entered(this.prompt._entry.get_text());
    }

    uninstall() {
        delete this.prompt._activateNext;
    }

    // Returns whether the answer went: never without a question waiting,
    // where GNOME would keep it for whatever question comes next.
    respond(text) {
        if (!this.prompt._queryingService)
            return false;
        const entry = this.prompt._entry;
        try {
            entry.set_text(text);
            this._activate.call(this.prompt, true);
        } finally {
            entry.set_text('');
        }
        return true;
    }

    say(text, error = false) {
        this.prompt.setMessage(text, error ? GdmUtil.MessageType.ERROR : GdmUtil.MessageType.INFO);
    }

    unsay() {
        this.prompt.setMessage(null);
    }
}

// GNOME's polkit dialog: a new PolkitAgent.Session for each attempt.
class PolkitHost {
    constructor(dialog) {
        this.name = 'polkit';
        this.dialog = dialog;
        this._response = PolkitAgent.Session.prototype.response;
        this._sessions = [];
    }

    static fits(dialog) {
        return dialog?._passwordEntry && dialog._infoMessageLabel && dialog._errorMessageLabel &&
            typeof dialog._initiateSession === 'function' && typeof PolkitAgent.Session.prototype.response === 'function';
    }

    get actor() {
        return this.dialog;
    }

    get field() {
        return this.dialog._passwordEntry;
    }

    get fieldRow() {
        return this.dialog._passwordEntry;
    }

    place(grid, button) {
        const entry = this.dialog._passwordEntry;
        entry.get_parent().insert_child_below(grid, entry);
        entry.get_parent().insert_child_above(button, entry);
    }

    install(events, watch) {
        const dialog = this.dialog;
        const watchSession = session => {
            if (!session || this._sessions.includes(session))
                return;
            this._sessions.push(session);
            watch(session, 'request', (_s, request) => events.asked(request));
            watch(session, 'show-error', (_s, text) => events.said(text));
            watch(session, 'show-info', (_s, text) => events.said(text));
            watch(session, 'completed', (_s, gained) => events.ended(gained));
            // GNOME's Enter and Authenticate answer through the session:
            // to `entered` instead.
            session.response = text => events.entered(text);
        };
        const initiate = dialog._initiateSession;
        // After a failure GNOME starts a new session for the next attempt.
        dialog._initiateSession = (...args) => {
            const result = initiate.apply(dialog, args);
            watchSession(dialog._session);
            return result;
        };
        watchSession(dialog._session);
    }

    uninstall() {
        delete this.dialog._initiateSession;
        for (const session of this._sessions)
            delete session.response;
        this._sessions = [];
    }

    respond(text) {
        const dialog = this.dialog;
        if (!dialog._session)
            return false;
        dialog._passwordEntry.set_text('');
        dialog._passwordEntry.reactive = false;
        dialog._okButton.reactive = false;
        dialog._errorMessageLabel.hide();
        dialog._infoMessageLabel.hide();
        this._response.call(dialog._session, text);
        return true;
    }

    say(text, error = false) {
        const dialog = this.dialog;
        const [shown, hidden] = error
            ? [dialog._errorMessageLabel, dialog._infoMessageLabel]
            : [dialog._infoMessageLabel, dialog._errorMessageLabel];
        shown.set_text(text);
        shown.show();
        hidden.hide();
        dialog._nullMessageLabel?.hide();
    }

    unsay() {
        this.dialog._infoMessageLabel.hide();
    }
}

// The grid on one GNOME dialog, for as long as the dialog lives: the
// conversation between the person, the grid and the dialog's PAM prompts.
class Attachment {
    constructor(host, settings, onBroken) {
        this._host = host;
        this._onBroken = onBroken;
        this._keysLayout = settings.get_string('keys-layout');
        this._conv = Conv.create(this._keysLayout);
        // A password entered before its prompt (pam_unix's) came, and the
        // field's text while Enter is handled.
        this._password = null;
        this._fieldText = null;
        // PAM's last words to the person ("Wrong pattern — 4 attempts left."),
        // kept on the dialog until they draw or type again: GNOME fades its
        // message when the next prompt comes.
        this._lastMessage = null;
        this._flashId = 0;
        this._describeId = 0;
        this._signals = [];

        this._box = new St.BoxLayout({
            orientation: Clutter.Orientation.VERTICAL,
            x_align: Clutter.ActorAlign.CENTER,
        });
        this._grid = new PatternGrid(GRID_SIDE, settings.get_boolean('hide-path'));
        this._box.add_child(this._grid);
        this._button = new St.Button({
            style_class: 'button',
            style: 'margin-top: 12px;',
            label: Conv.words.usePassword,
            can_focus: true,
            x_align: Clutter.ActorAlign.CENTER,
        });
        // The grid over GNOME's field, the button under it: under the grid
        // while the grid shows, under the field while the field does.
        host.place(this._box, this._button);

        this._grid.connect('drawn', (_grid, dots) =>
            this._guard(() => this._act(Conv.drawn(this._conv, dots.split('').map(Number)))));
        this._grid.connect('too-short', () => this._guard(() => this._act(Conv.tooShort(this._conv))));
        this._grid.connect('started', () => this._guard(() => {
            this._lastMessage = null;
            Conv.cleared(this._conv);
        }));
        this._grid.onKey = event => this._guard(() => this._key(event), Clutter.EVENT_PROPAGATE);
        this._grid.connect('notify::allocation', () => this._describeSoon());
        this._button.connect('clicked', () => this._guard(() => this._buttonClicked()));

        try {
            this._install(host);
        } catch (e) {
            this._box.destroy();
            this._button.destroy();
            try {
                host.uninstall();
                host.fieldRow.show();
            } catch {
                // as far as it went
            }
            throw e;
        }
        Conv.started(this._conv);
        this._sync();
        log(`attached to=${host.name}`);
    }

    _install(host) {
        host.install({
            asked: question => this._guard(() => this._asked(question)),
            said: message => this._guard(() => this._said(message)),
            ended: success => this._guard(() => this._ended(success)),
            restarted: () => this._guard(() => this._restarted()),
            entered: text => this._guard(() => this._entered(text)),
        }, (object, signal, handler) => {
            this._signals.push([object, object.connect(signal, handler)]);
        });
        this._destroyId = host.actor.connect('destroy', () => this.destroy());
    }

    // Runs f; on any error the grid goes and GNOME's dialog stays as it is.
    _guard(f, fallback) {
        try {
            return f();
        } catch (e) {
            console.error(`patternlock-gnome: detached after an error, GNOME's own dialog stays: ${e}\n${e.stack}`);
            this.destroy();
            this._onBroken?.();
            return fallback;
        }
    }

    get attached() {
        return this._host !== null;
    }

    destroy() {
        if (!this._host)
            return;
        const host = this._host;
        this._host = null;
        if (this._flashId)
            GLib.source_remove(this._flashId);
        if (this._describeId)
            GLib.source_remove(this._describeId);
        this._flashId = this._describeId = 0;
        this._password = null;
        for (const [object, id] of this._signals) {
            try {
                object.disconnect(id);
            } catch {
                // gone with the dialog
            }
        }
        this._signals = [];
        try {
            host.actor.disconnect(this._destroyId);
            host.uninstall();
            host.fieldRow.show();
            if (host.field.reactive)
                host.field.grab_key_focus();
        } catch {
            // the dialog is being destroyed
        }
        this._box.destroy();
        this._button.destroy();
        log(`detached from=${host.name}`);
    }

    // What the conversation said, in order.
    _act(actions) {
        for (const a of actions) {
            if (a.answer !== undefined)
                this._answer(a);
            else if (a.say !== undefined)
                this._host.say(a.say);
            else if (a.flash)
                this._flash();
            else if (a.dot !== undefined)
                this._grid.type(a.dot);
            else if (a.openField !== undefined)
                this._openField(a.openField);
            // show: GNOME shows PAM's messages itself. start, restart, end,
            // unlock: GNOME runs the attempts and unlocks.
        }
        this._sync();
    }

    // Answers the waiting prompt.
    _answer(a) {
        let text = '';
        if (a.answer === 'pattern') {
            text = a.text;
        } else if (a.answer === 'field') {
            text = this._fieldText ?? this._password ?? '';
            this._password = null;
        }
        if (this._host.respond(text)) {
            log(`answered kind=${a.answer}`);
        } else {
            // No question waits: nothing is sent, and the next prompt begins a
            // new attempt.
            log('not answered: no prompt waits');
            this._restarted();
        }
    }

    _asked(question) {
        const actions = Conv.prompted(this._conv, question);
        const read = this._conv.prompt;
        log(`prompt kind=${read.pattern ? 'pattern' : read.modulePassword ? 'module-password' : 'password'}`);
        this._act(actions);
        // Keys typed on the clock page went into GNOME's field before the
        // grid had the keyboard: they are typed on the grid now, as keys typed
        // there are (digits light dots, a letter opens the field with them).
        const early = this._host.field.get_text();
        if (early && this._conv.phase === 'pattern' && Conv.shows(this._conv) === 'grid') {
            this._host.field.set_text('');
            for (const ch of early)
                this._act(Conv.keyed(this._conv, ch));
        }
        if (this._lastMessage !== null && this._conv.awaiting)
            this._host.say(this._lastMessage, true);
    }

    _said(message) {
        if (!message)
            return;
        const grid = Conv.gridMessage(message) !== null;
        if (!grid)
            this._lastMessage = message;
        this._act(Conv.said(this._conv, message));
        // The grid is drawn: its picture in words is not shown as well.
        if (grid)
            this._host.unsay();
    }

    _ended(success) {
        log(`attempt result=${success ? 'success' : 'failure'}`);
        this._password = null;
        if (success)
            this._lastMessage = null;
        const actions = Conv.ended(this._conv, success);
        // GNOME goes on after a success itself, and starts the next attempt
        // after a failure.
        if (!success) {
            this._act(actions);
            Conv.started(this._conv);
        }
        this._sync();
    }

    // GNOME began a new conversation: so does the attachment (a password
    // that waited goes with the old one).
    _restarted() {
        this._password = null;
        this._lastMessage = null;
        this._conv = Conv.create(this._keysLayout);
        Conv.started(this._conv);
        this._grid.clear();
        this._sync();
    }

    // Enter (or GNOME's own button) with the field's text.
    _entered(text) {
        const waiting = this._conv.passwordPending;
        const actions = Conv.entered(this._conv, text === '');
        // A password entered while the module's prompt (or none) waits: kept
        // for the next prompt that is not the module's. One already waiting
        // stays the one answered.
        if (!waiting && this._conv.passwordPending)
            this._password = text;
        this._host.field.set_text('');
        this._fieldText = text;
        try {
            this._act(actions);
        } finally {
            this._fieldText = null;
        }
    }

    _key(event) {
        const symbol = event.get_key_symbol();
        this._lastMessage = null;
        if (this._conv.held) {
            this._act(Conv.keyed(this._conv, ' '));
            return Clutter.EVENT_STOP;
        }
        if (symbol === Clutter.KEY_Return || symbol === Clutter.KEY_KP_Enter) {
            this._grid.finish();
            return Clutter.EVENT_STOP;
        }
        if (symbol === Clutter.KEY_BackSpace || (symbol === Clutter.KEY_Escape && this._grid.path.length > 0)) {
            this._grid.clear();
            Conv.cleared(this._conv);
            return Clutter.EVENT_STOP;
        }
        const keypad = [Clutter.KEY_KP_1, Clutter.KEY_KP_2, Clutter.KEY_KP_3, Clutter.KEY_KP_4, Clutter.KEY_KP_5,
            Clutter.KEY_KP_6, Clutter.KEY_KP_7, Clutter.KEY_KP_8, Clutter.KEY_KP_9].indexOf(symbol);
        if (keypad >= 0) {
            this._act(Conv.keyed(this._conv, String(keypad + 1)));
            return Clutter.EVENT_STOP;
        }
        // A character (gjs gives the key's unichar as a string), as GNOME's
        // own dialog takes one.
        const character = event.get_key_unicode();
        if (character && GLib.unichar_isgraph(character)) {
            this._act(Conv.keyed(this._conv, character));
            return Clutter.EVENT_STOP;
        }
        return Clutter.EVENT_PROPAGATE;
    }

    _buttonClicked() {
        this._lastMessage = null;
        if (Conv.shows(this._conv) === 'grid') {
            this._act(Conv.usePassword(this._conv));
        } else {
            Conv.usePattern(this._conv);
            if (Conv.shows(this._conv) === 'grid')
                this._host.field.set_text('');
            this._sync();
        }
    }

    _openField(initial) {
        this._grid.clear();
        const field = this._host.field;
        field.set_text(initial || '');
        field.clutter_text.set_cursor_position(-1);
    }

    _flash() {
        this._grid.setWrong();
        if (this._flashId)
            GLib.source_remove(this._flashId);
        this._flashId = GLib.timeout_add(GLib.PRIORITY_DEFAULT, FLASH_MS, () => {
            this._flashId = 0;
            if (this._grid.wrong)
                this._grid.clear();
            return GLib.SOURCE_REMOVE;
        });
    }

    // The grid or GNOME's field, and the button that changes between them.
    _sync() {
        if (!this._host)
            return;
        const grid = Conv.shows(this._conv) === 'grid';
        const mayUsePattern = this._conv.phase !== 'password' && this._conv.phase !== 'checking';
        this._grid.visible = grid;
        this._host.fieldRow.visible = !grid;
        this._button.label = grid ? Conv.words.usePassword : Conv.words.usePattern;
        this._button.visible = grid || mayUsePattern;
        if (grid)
            this._grid.grab_key_focus();
        else if (this._host.field.reactive)
            this._host.field.grab_key_focus();
        this._describeSoon();
    }

    _describeSoon() {
        if (this._describeId)
            return;
        this._describeId = GLib.timeout_add(GLib.PRIORITY_DEFAULT, 100, () => {
            this._describeId = 0;
            this._guard(() => this._describe());
            return GLib.SOURCE_REMOVE;
        });
    }

    // One line a test reads (Tests/system/harness/debug_lines.py): what shows
    // and where, in the stage's pixels. Never what was drawn or typed.
    _describe() {
        if (!this._host)
            return;
        const [gx, gy] = this._grid.get_transformed_position();
        const [gw] = this._grid.get_transformed_size();
        const [bx, by] = this._button.get_transformed_position();
        const [bw, bh] = this._button.get_transformed_size();
        const view = Conv.shows(this._conv) === 'grid' ? 'grid' : 'field';
        const button = this._button.visible ? `${Math.round(bx + bw / 2)},${Math.round(by + bh / 2)}` : 'none';
        log(`where=${this._host.name} view=${view} phase=${this._conv.phase}` +
            ` grid=${Math.round(gx)},${Math.round(gy)},${Math.round(gw)} button=${button}` +
            ` label=${JSON.stringify(this._button.label)}`);
    }
}

export default class PatternUnlockExtension extends Extension {
    enable() {
        this._settings = this.getSettings();
        this._attachments = new Set();
        this._broken = false;
        this._injections = new InjectionManager();
        const extension = this;
        this._injections.overrideMethod(UnlockDialog.UnlockDialog.prototype, '_ensureAuthPrompt',
            original => function (...args) {
                const result = original.apply(this, args);
                extension._attach(this._authPrompt, UnlockHost);
                return result;
            });
        // Enabled while the screen is locked: the prompt already there.
        const dialog = Main.screenShield?._dialog;
        if (dialog?._authPrompt)
            this._attach(dialog._authPrompt, UnlockHost);
        // The polkit agent makes its dialog on its 'initiate' signal, before
        // the dialog's first session asks anything.
        this._polkitAgent = null;
        this._watchPolkit();
        Main.sessionMode.connectObject('updated', () => this._watchPolkit(), this);
    }

    disable() {
        Main.sessionMode.disconnectObject(this);
        this._polkitAgent?.disconnectObject(this);
        this._polkitAgent = null;
        this._injections.clear();
        this._injections = null;
        for (const attachment of this._attachments)
            attachment.destroy();
        this._attachments = null;
        this._settings = null;
    }

    _watchPolkit() {
        const agent = Main.componentManager?._allComponents?.polkitAgent ?? null;
        if (agent === this._polkitAgent)
            return;
        this._polkitAgent?.disconnectObject(this);
        this._polkitAgent = agent;
        agent?.connectObject('initiate', () => this._attach(agent._currentDialog, PolkitHost), this);
    }

    _attach(actor, Host) {
        if (!actor || actor._patternlock || this._broken)
            return;
        // GNOME Shell as tested: anything else keeps its own dialog.
        if (!Host.fits(actor)) {
            console.warn('patternlock-gnome: this GNOME Shell is not the one tested; its own dialog is kept');
            return;
        }
        try {
            const attachment = new Attachment(new Host(actor), this._settings, () => {
                this._broken = true;
            });
            if (!attachment.attached)
                return;
            actor._patternlock = attachment;
            this._attachments.add(attachment);
            actor.connect('destroy', () => {
                delete actor._patternlock;
                this._attachments?.delete(attachment);
            });
        } catch (e) {
            this._broken = true;
            console.error(`patternlock-gnome: not attached, GNOME's own dialog stays: ${e}`);
        }
    }
}
