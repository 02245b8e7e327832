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


_FILE_ESM = """
function render({ model, el }) {
  const button = document.createElement("button");
  button.id = model.get("dom_id");
  button.type = "button";
  button.className = "aiplan-button";
  const show = () => {
    button.textContent = model.get("busy") ? model.get("busy_label") : model.get("label");
    button.title = model.get("hint");
    button.disabled = model.get("disabled") || model.get("busy");
  };
  show();
  model.on("change", show);
  button.addEventListener("click", () => model.send({ event: "make" }));
  model.on("msg:custom", (content, buffers) => {
    if (content.event !== "file" || !buffers.length) return;
    const blob = new Blob([buffers[0]], { type: content.mime });
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = content.name;
    link.style.display = "none";
    document.body.appendChild(link);
    link.click();
    setTimeout(() => { URL.revokeObjectURL(link.href); link.remove(); }, 60000);
  });
  el.appendChild(button);
}
export default { render };
"""


class FileButton(anywidget.AnyWidget):
    """A button (DOM id ``dom_id``) that makes a file in the kernel and has the browser download it.

    ``make()`` returns ``(file name, bytes, MIME type)`` or raises; it runs in a thread, so the page
    stays live while a report is written; ``on_error(text)`` hears a failure in words. While it runs
    the button shows ``busy_label`` and is disabled.
    """

    _esm = _FILE_ESM
    _css = _CSS
    label = traitlets.Unicode("").tag(sync=True)
    busy_label = traitlets.Unicode("Writing…").tag(sync=True)
    dom_id = traitlets.Unicode("").tag(sync=True)
    hint = traitlets.Unicode("").tag(sync=True)
    disabled = traitlets.Bool(False).tag(sync=True)
    busy = traitlets.Bool(False).tag(sync=True)

    def __init__(self, make: Callable[[], tuple[str, bytes, str]], on_done: Callable[[str], None] | None = None,
                 **kwargs):
        super().__init__(**kwargs)
        self._make, self._on_done = make, on_done
        self.on_msg(lambda _widget, content, _buffers: self.click() if content.get("event") == "make" else None)

    def click(self, wait: bool = False) -> None:
        """Make the file and send it to the page (what a click does); ``wait`` for it (tests)."""
        if self.busy or self.disabled:
            return
        import threading

        self.busy = True
        worker = threading.Thread(target=self._run, daemon=True)
        worker.start()
        if wait:
            worker.join()

    def _run(self) -> None:
        try:
            name, data, mime = self._make()
            self.send({"event": "file", "name": name, "mime": mime}, buffers=[data])
            message = f"{name} downloaded"
        except Exception as exc:  # noqa: BLE001 - one line in words on the page, never a traceback
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        finally:
            self.busy = False
        if self._on_done:
            self._on_done(message)


_UPLOAD_ESM = """
function render({ model, el }) {
  const input = document.createElement("input");
  input.type = "file";
  input.accept = model.get("accept");
  input.style.display = "none";
  const button = document.createElement("button");
  button.id = model.get("dom_id");
  button.type = "button";
  button.className = "aiplan-button";
  button.textContent = model.get("label");
  button.title = model.get("hint");
  button.addEventListener("click", () => input.click());
  input.addEventListener("change", async () => {
    const file = input.files[0];
    if (!file) return;
    model.send({ event: "file", name: file.name, text: await file.text() });
    input.value = "";
  });
  el.appendChild(input);
  el.appendChild(button);
}
export default { render };
"""


class PlanUpload(anywidget.AnyWidget):
    """A "Load a plan file" button (DOM id ``dom_id``): the chosen file's text goes to ``on_file(name, text)``; the
    same file chosen again loads again."""

    _esm = _UPLOAD_ESM
    _css = _CSS
    label = traitlets.Unicode("Load a plan file").tag(sync=True)
    dom_id = traitlets.Unicode("aiplan-load").tag(sync=True)
    hint = traitlets.Unicode("Open a plan (YAML) saved from the planner or written by hand").tag(sync=True)
    accept = traitlets.Unicode(".yaml,.yml").tag(sync=True)

    def __init__(self, on_file: Callable[[str, str], None], **kwargs):
        super().__init__(**kwargs)
        self.on_msg(lambda _widget, content, _buffers: on_file(str(content.get("name") or "plan file"),
                                                               str(content.get("text") or ""))
                    if content.get("event") == "file" else None)

    def send_file(self, name: str, text: str) -> None:
        """What choosing a file in the page does (tests)."""
        self._handle_custom_msg({"event": "file", "name": name, "text": text}, [])
