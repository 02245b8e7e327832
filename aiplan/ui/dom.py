"""Two small anywidgets of the planner: a button with a stable DOM id (ipywidgets buttons take classes
only), for the app and its browser tests; and a signal that the page has drawn the app."""

from __future__ import annotations

from collections.abc import Callable

import anywidget
import traitlets

_ESM = """
function render({ model, el }) {
  const button = document.createElement("button");
  button.id = model.get("dom_id");
  button.type = "button";
  const show = () => {
    button.textContent = model.get("label");
    button.title = model.get("hint");
    button.disabled = model.get("disabled");
    button.className = "aiplan-button " + model.get("kind");
  };
  show();
  model.on("change", show);
  button.addEventListener("click", () => {
    model.set("clicks", model.get("clicks") + 1);
    model.save_changes();
  });
  el.appendChild(button);
}
export default { render };
"""

_CSS = """
.aiplan-button {font: inherit; font-size: 13px; padding: 4px 12px; border-radius: 4px; cursor: pointer;
                border: 1px solid #90a4ae; background: #fff; color: #102030; white-space: nowrap;}
.aiplan-button:hover:enabled {background: #eceff1;}
.aiplan-button.primary {background: #2e7d32; border-color: #1b5e20; color: #fff; font-weight: 600;}
.aiplan-button.primary:hover:enabled {background: #1b5e20;}
.aiplan-button:disabled {opacity: .5; cursor: default;}
"""


class ActionButton(anywidget.AnyWidget):
    """A button whose ``<button>`` has the DOM id ``dom_id``; ``on_click(callback)`` runs on each click."""

    _esm = _ESM
    _css = _CSS
    label = traitlets.Unicode("").tag(sync=True)
    dom_id = traitlets.Unicode("").tag(sync=True)
    kind = traitlets.Unicode("").tag(sync=True)
    hint = traitlets.Unicode("").tag(sync=True)  # the title (hover text); ``tooltip`` is the DOMWidget's
    disabled = traitlets.Bool(False).tag(sync=True)
    clicks = traitlets.Int(0).tag(sync=True)

    def on_click(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` after every click (in the browser, or :meth:`click` here)."""
        self.observe(lambda _change: callback(), names="clicks")

    def click(self) -> None:
        """Click the button from Python (what the browser does)."""
        if not self.disabled:
            self.clicks += 1


_READY_ESM = """
function render({ model, el }) {
  el.style.display = "none";
  requestAnimationFrame(() => setTimeout(() => model.send({ event: "ready" }), 0));
}
export default { render };
"""


class PageReady(anywidget.AnyWidget):
    """Invisible; calls ``callback()`` once a page has drawn it (the app is on screen).

    The planner adds its charts then: each chart widget brings Vega (0.9 MB of JavaScript) that the
    browser compiles before it can draw anything, which would hold back the key figures by a second.
    """

    _esm = _READY_ESM

    def __init__(self, callback: Callable[[], None], **kwargs):
        super().__init__(**kwargs)
        self.on_msg(lambda _widget, content, _buffers: callback() if content.get("event") == "ready" else None)
