// The study creation / edit page: live counts of eligible questions and pairs
// (GET data-counts-url) and the Markdown preview (POST data-preview-url; the
// server returns HTML it has already sanitised), and the adaptive design's own
// settings shown only while that design is chosen (without this script they stay
// visible, labelled "adaptive design only"). No inline script: CSP-friendly.
(function () {
  "use strict";
  var form = document.getElementById("study-form");
  if (!form) { return; }
  var SCOPE_FIELDS = ["run", "datasets", "subjects", "include_unkept", "include_low_coverage"];
  var csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  var status = document.getElementById("counts-status");
  var excluded = document.getElementById("excluded");
  var hint = document.getElementById("pairs-hint");
  var latest = null;
  var sequence = 0;

  function checked(name) {
    return Array.prototype.map.call(form.querySelectorAll("input[name=" + name + "]:checked"), function (el) {
      return el.value;
    });
  }

  function query() {
    var params = new URLSearchParams();
    if (form.elements.run.value) { params.set("run", form.elements.run.value); }
    checked("datasets").forEach(function (v) { params.append("datasets", v); });
    checked("subjects").forEach(function (v) { params.append("subjects", v); });
    if (form.elements.include_unkept.checked) { params.set("include_unkept", "on"); }
    if (form.elements.include_low_coverage.checked) { params.set("include_low_coverage", "on"); }
    return params;
  }

  function setText(id, value) { document.getElementById(id).textContent = value; }

  // A count as the pages print one (the annotate_numbers "count" filter): 316929 -> "316,929"; blank stays blank.
  function count(value) { return value === "" || value == null ? "" : Number(value).toLocaleString("en-US"); }
  // A count and its noun: "1 pair", "2 pairs" (every noun here takes an s).
  function counted(value, noun) { return count(value) + " " + noun + (Number(value) === 1 ? "" : "s"); }

  function clearCounts(message) {
    latest = null;
    form.querySelectorAll("tr[data-subject]").forEach(function (row) {
      row.hidden = false;
      row.querySelectorAll("td.num").forEach(function (td) { td.textContent = ""; });
    });
    ["total-questions", "total-eligible", "total-pairs"].forEach(function (id) { setText(id, ""); });
    excluded.replaceChildren();
    status.textContent = message;
    updateHint();
  }

  function render(data) {
    latest = data;
    var bySubject = new Map(data.subjects.map(function (s) { return [String(s.subject_id), s]; }));
    form.querySelectorAll("tr[data-subject]").forEach(function (row) {
      var s = bySubject.get(row.dataset.subject);
      row.hidden = !s;
      row.querySelector(".n-questions").textContent = s ? count(s.n_questions) : "";
      row.querySelector(".n-eligible").textContent = s ? count(s.n_eligible) : "";
      row.querySelector(".n-pairs").textContent = s ? count(s.n_possible_pairs) : "";
    });
    setText("total-questions", count(data.n_questions));
    setText("total-eligible", count(data.n_eligible));
    setText("total-pairs", count(data.n_possible_pairs));
    var left = data.excluded.reduce(function (sum, e) { return sum + e.n; }, 0);
    status.textContent = count(data.n_eligible) + " of " + counted(data.n_questions, "question") +
      (Number(data.n_eligible) === 1 ? " is" : " are") + " eligible, allowing " +
      counted(data.n_possible_pairs, "distinct same-subject pair") + "; " + count(left) + " left out" + (left ? ":" : ".");
    excluded.replaceChildren();
    data.excluded.forEach(function (e) {
      if (!e.n) { return; }
      var li = document.createElement("li");
      li.textContent = count(e.n) + " with " + e.reason;
      excluded.appendChild(li);
    });
    updateHint();
  }

  function updateHint() {
    var n = parseInt(form.elements.n_pairs.value, 10);
    var perSubject = form.querySelector("input[name=pairs_mode]:checked");
    perSubject = perSubject && perSubject.value === "per_subject";
    hint.classList.remove("over");
    if (!latest || !(n >= 1)) {
      hint.textContent = "The paper used 70 pairs in all.";
      return;
    }
    var chosen = checked("subjects");
    var subjects = latest.subjects.filter(function (s) {
      return !chosen.length || chosen.indexOf(String(s.subject_id)) >= 0;
    });
    if (perSubject) {
      var short = subjects.filter(function (s) { return s.n_possible_pairs < n; });
      hint.textContent = counted(n, "pair") + " in each of " + counted(subjects.length, "subject") + " = " +
        counted(n * subjects.length, "pair") + "." + (short.length ? " Too few possible in: " + short.map(function (s) { return s.name; }).join(", ") + "." : "");
      if (short.length) { hint.classList.add("over"); }
    } else if (form.elements.strategy && form.elements.strategy.value === "adaptive") {
      hint.textContent = counted(n, "pair") + " per evaluator, chosen as they judge, among " +
        counted(latest.n_possible_pairs, "possible pair") + "." + (n > latest.n_possible_pairs ? " Ask for fewer, or widen the datasets and subjects." : "");
      if (n > latest.n_possible_pairs) { hint.classList.add("over"); }
    } else {
      hint.textContent = count(n) + " of at most " + counted(latest.n_possible_pairs, "possible pair") + "." +
        (n > latest.n_possible_pairs ? " Ask for fewer, or widen the datasets and subjects." : "");
      if (n > latest.n_possible_pairs) { hint.classList.add("over"); }
    }
  }

  function refresh() {
    var params = query();
    if (!params.get("run") || !params.getAll("datasets").length) {
      clearCounts("Choose a run and at least one dataset to see how many questions and pairs are eligible.");
      return;
    }
    var mine = ++sequence;
    status.textContent = "Counting…";
    fetch(form.dataset.countsUrl + "?" + params.toString(), { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.json();
      })
      .then(function (data) { if (mine === sequence) { render(data); } })
      .catch(function (error) { if (mine === sequence) { clearCounts("Could not count the questions (" + error.message + ")."); } });
  }

  function preview(button) {
    var source = document.getElementById(button.dataset.previewFor);
    var target = document.getElementById(button.dataset.previewInto);
    var body = new FormData();
    body.append("text", source.value);
    body.append("csrfmiddlewaretoken", csrf);
    button.disabled = true;
    fetch(form.dataset.previewUrl, { method: "POST", body: body, credentials: "same-origin", headers: { "X-CSRFToken": csrf } })
      .then(function (response) {
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.json();
      })
      .then(function (data) { target.innerHTML = data.html; target.hidden = false; })  // sanitised by the server (nh3)
      .catch(function (error) { target.textContent = "No preview (" + error.message + ")."; target.hidden = false; })
      .finally(function () { button.disabled = false; });
  }

  function showAdaptive() {
    var adaptive = form.elements.strategy && form.elements.strategy.value === "adaptive";
    form.querySelectorAll(".adaptive-only").forEach(function (el) { el.hidden = !adaptive; });
  }

  form.addEventListener("change", function (event) {
    if (SCOPE_FIELDS.indexOf(event.target.name) >= 0) { refresh(); } else { updateHint(); }
    if (event.target.name === "strategy") { showAdaptive(); }
  });
  showAdaptive();
  form.elements.n_pairs.addEventListener("input", updateHint);
  form.querySelectorAll("button[data-preview-for]").forEach(function (button) {
    button.addEventListener("click", function () { preview(button); });
  });
  refresh();
})();
