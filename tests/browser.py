"""Look at an HTML report as a reader does: render it in headless Chromium and measure the
page (helpers of ``test_report_browser.py``).

The page is rendered from a copy with a small script put first in its ``<head>``: it records
script errors, ``console.error`` calls and resources that fail to load from the start, and
once the page has loaded it measures it (the viewport's width, the page's width and height,
the elements that stick out of the viewport, every image and whether it loaded) and writes
the record, with the page's visible text, into the page as JSON, which ``--dump-dom`` then
gives back.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

#: Debian's package, and the names other systems give the same browser
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
WIDTH, HEIGHT = 1400, 3000

_PROBE = r"""
<script>
(function () {
  var errors = [];
  window.addEventListener("error", function (e) {
    var t = e.target;
    if (t && t !== window && (t.src || t.href)) {
      errors.push("failed to load " + (t.src || t.href).slice(0, 120));
    } else {
      errors.push("script error: " + (e.message || String(e)));
    }
  }, true);
  var original = console.error;
  console.error = function () {
    errors.push("console.error: " + Array.prototype.join.call(arguments, " "));
    return original.apply(console, arguments);
  };
  function scrolls(el) {
    for (var a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      var o = getComputedStyle(a).overflowX;
      if (o === "auto" || o === "scroll" || o === "hidden") return true;
    }
    return false;
  }
  window.addEventListener("load", function () {
    var vw = document.documentElement.clientWidth;
    var wide = [];
    var all = document.body.getElementsByTagName("*");
    for (var i = 0; i < all.length; i++) {
      var r = all[i].getBoundingClientRect();
      if (r.width > 0 && r.right > vw + 1 && !scrolls(all[i])) {
        wide.push(all[i].tagName.toLowerCase() + (all[i].id ? "#" + all[i].id : "")
                  + (all[i].className ? "." + String(all[i].className).split(" ")[0] : "")
                  + " (" + Math.round(r.right) + " px)");
      }
    }
    var images = [];
    for (var j = 0; j < document.images.length; j++) {
      var im = document.images[j];
      images.push({src: (im.getAttribute("src") || "").slice(0, 60),
                   loaded: im.complete && im.naturalWidth > 0,
                   width: im.getBoundingClientRect().width});
    }
    var record = {viewport: vw, width: document.documentElement.scrollWidth,
                  height: document.documentElement.scrollHeight, wide: wide.slice(0, 20),
                  n_wide: wide.length, images: images, errors: errors,
                  text: document.body.innerText};
    var out = document.createElement("script");
    out.type = "application/json";
    out.id = "__page_record";
    out.textContent = JSON.stringify(record);
    document.body.appendChild(out);
  });
})();
</script>
"""

#: what a reader should never see in the text of a page: raw JSON, Python reprs
RAW = {
    "a JSON object": re.compile(r"\{\s*\"[^\"]{1,40}\"\s*:"),
    "a Python dict": re.compile(r"\{\s*'[^']{1,40}'\s*:"),
    "a list of records": re.compile(r"\[\s*\{"),
    "a NumPy repr": re.compile(r"\barray\(|\bnp\.(float|int)\d*\(|dtype="),
    "a Python object repr": re.compile(r"<[\w.]+ object at 0x|<function \w+"),
    "an escaped character": re.compile(r"\\u[0-9a-fA-F]{4}|\\n"),
}


def find_browser() -> str | None:
    """The path of a Chromium binary, or None."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def render(browser: str, page: Path, screenshot: Path | None = None,
           width: int = WIDTH, height: int = HEIGHT) -> dict:
    """The record of ``page`` rendered at ``width`` px (see the module notes); with
    ``screenshot``, a PNG of the first ``height`` px too."""
    html = page.read_text(encoding="utf-8")
    at = html.lower().find("<head>")
    probed = (html[:at + 6] + _PROBE + html[at + 6:]) if at >= 0 else _PROBE + html
    copy = page.with_name(page.stem + ".probed.html")
    copy.write_text(probed, encoding="utf-8")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--allow-file-access-from-files", f"--window-size={width},{height}",
             "--virtual-time-budget=10000"]
    try:
        run = subprocess.run([browser, *flags, "--dump-dom", copy.as_uri()],
                             capture_output=True, text=True, timeout=180)
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run([browser, *flags, f"--screenshot={screenshot}", page.as_uri()],
                           capture_output=True, text=True, timeout=180)
    finally:
        copy.unlink(missing_ok=True)
    m = re.search(r'<script type="application/json" id="__page_record">(.*?)</script>',
                  run.stdout, re.S)
    if m is None:
        raise RuntimeError(f"the browser gave no record of {page}: {run.stderr[-2000:]}")
    return json.loads(_unescape(m.group(1)))


def _unescape(text: str) -> str:
    """The JSON text of a script element as ``--dump-dom`` serialises it."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def problems(record: dict, max_height: int) -> list[str]:
    """What a reader would object to in a rendered page's ``record``."""
    out = []
    for what, pattern in RAW.items():
        m = pattern.search(record["text"])
        if m:
            lo = max(0, m.start() - 60)
            out.append(f"{what} in the text: ...{record['text'][lo:m.end() + 60]!r}...")
    if record["width"] > record["viewport"] + 1:
        out.append(f"the page is {record['width']} px wide in a {record['viewport']} px "
                   f"window; sticking out: {record['wide'][:5]}")
    elif record["n_wide"]:
        out.append(f"{record['n_wide']} elements stick out of the window: {record['wide'][:5]}")
    if record["height"] > max_height:
        out.append(f"the page is {record['height']} px tall (at most {max_height})")
    for image in record["images"]:
        if not image["loaded"]:
            out.append(f"an image does not load: {image['src']}")
    out += record["errors"]
    return out
