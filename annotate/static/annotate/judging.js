/* Judging page: keyboard shortcuts, one submission per page, time on page.
 *
 * - Arrow left / arrow right / S press the matching button, but only as a
 *   plain key press: with Shift, Ctrl, Alt or Meta held, while an input
 *   method is composing, as an auto-repeat, or with the focus in a text
 *   field, the key is left to the browser and nothing is submitted
 *   (Alt+Left is "back", Shift+Arrow selects text, Ctrl+S saves the page).
 * - The first submission disables the buttons, so a double click or a
 *   repeated key sends one answer (the server ignores repeats anyway).
 * - client_ms carries the time since the page was shown (advisory; the
 *   server keeps its own clock).
 */
(function () {
  "use strict";
  var form = document.getElementById("judge-form");
  if (!form) { return; }
  var started = performance.now();
  var sent = false;
  var buttons = Array.prototype.slice.call(form.querySelectorAll("button[name=choice]"));
  var keys = { ArrowLeft: "left", ArrowRight: "right", s: "skip", S: "skip" };

  function setEnabled(enabled) {
    buttons.forEach(function (b) { b.disabled = !enabled; });
    form.classList.toggle("sending", !enabled);
  }

  form.addEventListener("submit", function (event) {
    if (sent) { event.preventDefault(); return; }
    sent = true;
    form.elements.client_ms.value = String(Math.round(performance.now() - started));
    var submitter = event.submitter;
    if (!submitter) { return; }  // old browser: let it send the button itself
    // Disabled buttons are not sent, so carry the choice in a hidden field.
    var hidden = form.querySelector("input[name=choice]");
    if (!hidden) {
      hidden = document.createElement("input");
      hidden.type = "hidden";
      hidden.name = "choice";
      form.appendChild(hidden);
    }
    hidden.value = submitter.value;
    setEnabled(false);
  });

  function isPlainPress(event) {
    if (event.shiftKey || event.ctrlKey || event.altKey || event.metaKey) { return false; }
    if (event.getModifierState && event.getModifierState("AltGraph")) { return false; }
    if (event.isComposing || event.keyCode === 229 || event.repeat) { return false; }
    var target = event.target;
    var typing = target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" ||
                            target.tagName === "SELECT" || target.isContentEditable);
    return !typing;
  }

  document.addEventListener("keydown", function (event) {
    if (!isPlainPress(event)) { return; }
    var value = keys[event.key];
    if (!value) { return; }
    event.preventDefault();
    if (sent) { return; }
    var button = form.querySelector('button[name=choice][value="' + value + '"]');
    if (button && !button.disabled) { form.requestSubmit(button); }
  });

  form.setAttribute("data-keys", "on");  // the shortcuts listen from here on (browser tests wait for it)

  // Back/forward cache: a restored page must be usable again.
  window.addEventListener("pageshow", function (event) {
    if (event.persisted) {
      sent = false;
      started = performance.now();
      var hidden = form.querySelector("input[name=choice]");
      if (hidden) { hidden.remove(); }
      setEnabled(true);
    }
  });
}());
