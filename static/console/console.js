// XMemo console behaviour. Loaded as a static file: the CSP allows no inline script.
// Editor: live limits (bytes left of the body, components left), a Markdown toolbar, and
// adding component rows from a <template>. Everything else is plain HTML forms and htmx.
(function () {
  "use strict";

  var encoder = new TextEncoder();

  function formatBytes(n) {
    return n.toLocaleString("en-US");
  }

  function initLimits(form) {
    var body = form.querySelector("#id_instruction_body");
    var bytesLeft = document.getElementById("body-bytes-left");
    var componentsLeft = document.getElementById("components-left");
    if (!body || !bytesLeft || !componentsLeft) return function () {};
    var maxBytes = Number(body.dataset.limitBytes);
    var maxComponents = Number(componentsLeft.dataset.limit);
    function refresh() {
      var left = maxBytes - encoder.encode(body.value).length;
      bytesLeft.textContent = left >= 0
        ? formatBytes(left) + " bytes left of 64 KiB"
        : formatBytes(-left) + " bytes over the 64 KiB limit";
      bytesLeft.classList.toggle("over", left < 0);
      var used = form.querySelectorAll("[data-component-row]:not(.removed)").length;
      var remaining = maxComponents - used;
      componentsLeft.textContent = remaining >= 0
        ? remaining + " components left of " + maxComponents
        : -remaining + " components over the limit of " + maxComponents;
      componentsLeft.classList.toggle("over", remaining < 0);
    }
    body.addEventListener("input", refresh);
    refresh();
    return refresh;
  }

  function initComponents(form, refresh) {
    var rows = document.getElementById("component-rows");
    var template = document.getElementById("component-row-template");
    var add = document.getElementById("add-component");
    if (!rows || !template || !add) return;
    add.addEventListener("click", function () {
      var index = Number(add.dataset.nextIndex);
      add.dataset.nextIndex = String(index + 1);
      var html = template.innerHTML.split("__index__").join(String(index));
      rows.insertAdjacentHTML("beforeend", html);
      var fresh = rows.lastElementChild;
      var path = fresh && fresh.querySelector("input[name$='-path']");
      if (path) path.focus();
      refresh();
    });
    form.addEventListener("change", function (event) {
      var toggle = event.target.closest("[data-remove-toggle]");
      if (!toggle) return;
      toggle.closest("[data-component-row]").classList.toggle("removed", toggle.checked);
      refresh();
    });
  }

  var WRAPS = {
    bold: ["**", "**", "bold text"],
    italic: ["_", "_", "italic text"],
    code: ["`", "`", "code"],
    link: ["[", "](https://)", "link text"]
  };
  var LINE_PREFIXES = { heading: "## ", list: "- ", numbered: "1. ", quote: "> " };

  function applyFormat(textarea, kind) {
    var start = textarea.selectionStart;
    var end = textarea.selectionEnd;
    var value = textarea.value;
    var selected = value.slice(start, end);
    var replacement;
    if (WRAPS[kind]) {
      var w = WRAPS[kind];
      replacement = w[0] + (selected || w[2]) + w[1];
    } else {
      var prefix = LINE_PREFIXES[kind];
      var lineStart = value.lastIndexOf("\n", start - 1) + 1;
      start = lineStart;
      selected = value.slice(lineStart, end);
      replacement = (selected || "").split("\n").map(function (line) { return prefix + line; }).join("\n");
    }
    textarea.setRangeText(replacement, start, end, "select");
    textarea.focus();
    textarea.dispatchEvent(new Event("input", { bubbles: true }));
  }

  function initToolbar() {
    document.querySelectorAll("[data-toolbar-for]").forEach(function (bar) {
      var textarea = document.getElementById(bar.dataset.toolbarFor);
      bar.addEventListener("click", function (event) {
        var button = event.target.closest("button[data-md]");
        if (button && textarea) applyFormat(textarea, button.dataset.md);
      });
    });
  }

  // Connect page: "Copy" puts its snippet's text on the clipboard.
  function initCopy() {
    document.addEventListener("click", function (event) {
      var button = event.target.closest("button[data-copy]");
      if (!button) return;
      var source = button.closest(".snippet").querySelector("[data-copy-source]");
      navigator.clipboard.writeText(source.textContent).then(function () {
        button.textContent = "Copied";
      }, function () {
        window.getSelection().selectAllChildren(source);
        button.textContent = "Press Ctrl+C";
      });
    });
  }

  function init() {
    initCopy();
    var form = document.getElementById("editor-form");
    if (form) {
      var refresh = initLimits(form);
      initComponents(form, refresh);
    }
    initToolbar();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
