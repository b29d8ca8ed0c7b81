// SPDX-License-Identifier: Apache-2.0
// The 3x3 grid on GNOME Shell's dialogs: dots that light as the finger or the
// pointer passes, a line that follows it, red for a wrong pattern. The drawing
// rule is patternRule.js (js/PatternRule.js, checked against the Swift core in
// make check); this file only draws and reads the pointer, touch and keys.
import Clutter from 'gi://Clutter';
import GObject from 'gi://GObject';
import St from 'gi://St';

import * as Rule from './patternRule.js';

const DOT = [0.78, 0.8, 0.83];
const LIT = [0.31, 0.76, 0.97];
const WRONG = [0.9, 0.22, 0.21];

export const PatternGrid = GObject.registerClass({
    Signals: {
        // A path of at least the fewest dots ended (lifted, or Enter after typed dots): the dots, "1235".
        'drawn': {param_types: [GObject.TYPE_STRING]},
        // Fewer dots ended: nothing is answered.
        'too-short': {},
        // A drag began.
        'started': {},
    },
}, class PatternGrid extends St.DrawingArea {
    _init(side, hidePath) {
        super._init({
            reactive: true,
            can_focus: true,
            track_hover: true,
            width: side,
            height: side,
            x_align: Clutter.ActorAlign.CENTER,
            accessible_name: 'Pattern',
        });
        this.path = [];
        this.wrong = false;
        this.hidePath = hidePath;
        this._finger = null;
        this._last = null;
        this._grab = null;
        this._sequence = null;
        this._pressed = false;
        this.onKey = null;
    }

    get side() {
        return Math.min(this.width, this.height);
    }

    clear() {
        this.path = [];
        this.wrong = false;
        this._finger = null;
        this.queue_repaint();
    }

    setWrong() {
        this.wrong = true;
        this._finger = null;
        this.queue_repaint();
    }

    // A dot typed on the keys 1-9 (already in the grid's numbering).
    type(dot) {
        if (this._pressed)
            return;
        if (this.wrong)
            this.clear();
        if (Rule.type(this.path, dot))
            this.queue_repaint();
    }

    // Ends typed dots, as a lift ends drawn ones.
    finish() {
        if (this._pressed || this.path.length === 0 || this.wrong)
            return;
        this._end();
    }

    _local(event) {
        const [x, y] = event.get_coords();
        const [, lx, ly] = this.transform_stage_point(x, y);
        return {x: lx, y: ly};
    }

    _begin(event) {
        this.clear();
        this.emit('started');
        const p = this._local(event);
        Rule.move(this.path, p, p, this.side);
        this._last = p;
        this._finger = p;
        this._pressed = true;
        this._grab = global.stage.grab(this);
        this.queue_repaint();
    }

    _move(event) {
        const p = this._local(event);
        Rule.move(this.path, this._last, p, this.side);
        this._last = p;
        this._finger = p;
        this.queue_repaint();
    }

    // The finger or the button is up: the stage's grab goes.
    _letGo() {
        this._pressed = false;
        this._sequence = null;
        this._grab?.dismiss();
        this._grab = null;
    }

    _release() {
        this._letGo();
        this._end();
    }

    _end() {
        this._finger = null;
        const dots = this.path.slice();
        this.queue_repaint();
        if (dots.length === 0)
            return;
        if (dots.length >= Rule.minimumDots) {
            this.emit('drawn', dots.join(''));
        } else {
            this.clear();
            this.emit('too-short');
        }
    }

    // The keys go to whoever set onKey (the attachment: keys 1-9 draw, a
    // letter opens the field); Clutter hands them to this method.
    vfunc_key_press_event(event) {
        return this.onKey ? this.onKey(event) : Clutter.EVENT_PROPAGATE;
    }

    vfunc_button_press_event(event) {
        if (event.get_button() !== Clutter.BUTTON_PRIMARY || this._pressed)
            return Clutter.EVENT_PROPAGATE;
        this._begin(event);
        return Clutter.EVENT_STOP;
    }

    vfunc_motion_event(event) {
        if (!this._pressed || this._sequence !== null)
            return Clutter.EVENT_PROPAGATE;
        this._move(event);
        return Clutter.EVENT_STOP;
    }

    vfunc_button_release_event(event) {
        if (!this._pressed || this._sequence !== null || event.get_button() !== Clutter.BUTTON_PRIMARY)
            return Clutter.EVENT_PROPAGATE;
        this._move(event);
        this._release();
        return Clutter.EVENT_STOP;
    }

    // One finger draws; a second is ignored, as on the lock screen.
    vfunc_touch_event(event) {
        const type = event.type();
        // A new wrapper each event: the slot names the finger.
        const sequence = event.get_event_sequence()?.get_slot() ?? -1;
        if (type === Clutter.EventType.TOUCH_BEGIN) {
            if (this._pressed)
                return Clutter.EVENT_STOP;
            this._begin(event);
            this._sequence = sequence;
            return Clutter.EVENT_STOP;
        }
        if (!this._pressed || this._sequence === null || sequence !== this._sequence)
            return Clutter.EVENT_PROPAGATE;
        if (type === Clutter.EventType.TOUCH_UPDATE) {
            this._move(event);
        } else if (type === Clutter.EventType.TOUCH_END) {
            this._move(event);
            this._release();
        } else if (type === Clutter.EventType.TOUCH_CANCEL) {
            this._letGo();
            this.clear();
        }
        return Clutter.EVENT_STOP;
    }

    vfunc_repaint() {
        const cr = this.get_context();
        const [width, height] = this.get_surface_size();
        const side = Math.min(width, height);
        const ox = (width - side) / 2, oy = (height - side) / 2;
        const spacing = side / 3;
        const radius = Math.max(4, spacing * 0.08);
        const colour = this.wrong ? WRONG : LIT;
        const showPath = this.wrong || !this.hidePath;
        if (showPath && this.path.length > 0) {
            cr.setSourceRGBA(colour[0], colour[1], colour[2], 0.8);
            cr.setLineWidth(Math.max(3, spacing * 0.05));
            cr.setLineCap(1); // round
            cr.setLineJoin(1); // round
            let c = Rule.centre(this.path[0], side);
            cr.moveTo(ox + c.x, oy + c.y);
            for (let i = 1; i < this.path.length; i++) {
                c = Rule.centre(this.path[i], side);
                cr.lineTo(ox + c.x, oy + c.y);
            }
            if (this._finger && !this.wrong)
                cr.lineTo(ox + this._finger.x, oy + this._finger.y);
            cr.stroke();
        }
        for (let dot = 1; dot <= 9; dot++) {
            const d = Rule.centre(dot, side);
            const lit = showPath && this.path.includes(dot);
            if (lit) {
                cr.setSourceRGBA(colour[0], colour[1], colour[2], 0.3);
                cr.arc(ox + d.x, oy + d.y, radius * 1.7, 0, 2 * Math.PI);
                cr.fill();
            }
            const fill = lit ? colour : DOT;
            cr.setSourceRGBA(fill[0], fill[1], fill[2], 1);
            cr.arc(ox + d.x, oy + d.y, radius * (lit ? 1.1 : 1), 0, 2 * Math.PI);
            cr.fill();
        }
        cr.$dispose();
    }
});
