// The console's one script: the overview refreshes itself, a list's "select all" box, and
// the login page goes on. No inline script anywhere (the Content-Security-Policy forbids
// it); the HTML it fetches is drawn and escaped by the server.
"use strict";
(function () {
  var go = document.querySelector("[data-go]");
  if (go) {
    // Leaves the login link, and its token, out of the history.
    location.replace(go.getAttribute("href"));
    return;
  }

  var live = document.getElementById("live");
  if (live) {
    var every = parseInt(live.getAttribute("data-every"), 10) || 5000;
    var src = live.getAttribute("data-src");
    var refresh = function () {
      if (document.hidden) {
        return;
      }
      fetch(src, { credentials: "same-origin", headers: { "Accept": "text/html" } })
        .then(function (r) {
          if (!r.ok) {
            throw new Error(r.status);
          }
          return r.text();
        })
        .then(function (html) {
          var doc = new DOMParser().parseFromString("<div>" + html + "</div>", "text/html");
          var fresh = doc.body.firstElementChild;
          live.replaceChildren.apply(live, Array.prototype.slice.call(fresh.childNodes));
          live.setAttribute("data-refreshed", String(Date.now()));
        })
        .catch(function () {
          live.setAttribute("data-stale", "true");
        });
    };
    setInterval(refresh, every);
  }

  document.querySelectorAll("input[data-select-all]").forEach(function (all) {
    all.addEventListener("change", function () {
      var form = all.closest("form");
      form.querySelectorAll('input[type=checkbox][name=id]').forEach(function (box) {
        box.checked = all.checked;
      });
    });
  });
})();
