// The match page: step through a replay, or follow a live match over the spectator stream.
// Boards are drawn by the server (/boards/GAME.svg?position=...); this script only fetches
// them, moves through the list and counts the clocks down. No inline script: the page's
// Content-Security-Policy allows only files like this one.
(function () {
  "use strict";

  var data = JSON.parse(document.getElementById("match-data").textContent);
  var boardBox = document.getElementById("board");
  var movesBody = document.getElementById("moves");
  var svgCache = new Map();
  var latestRequest = 0;

  function boardUrl(position, last) {
    var url = "/boards/" + data.game + ".svg?position=" + encodeURIComponent(JSON.stringify(position));
    return last ? url + "&last=" + encodeURIComponent(last) : url;
  }

  // last: the move that led to the position, marked on the board (optional).
  function fetchBoard(position, last) {
    var url = boardUrl(position, last);
    if (!svgCache.has(url)) {
      svgCache.set(url, fetch(url).then(function (response) {
        if (!response.ok) { throw new Error("board " + response.status); }
        return response.text();
      }).catch(function (error) { svgCache.delete(url); throw error; }));
    }
    return svgCache.get(url);
  }

  // Show a position; a slower answer for an older step never replaces a newer one.
  function showPosition(position, last) {
    var request = ++latestRequest;
    return fetchBoard(position, last).then(function (svg) {
      if (request === latestRequest) {
        boardBox.innerHTML = svg;
        boardBox.dataset.shown = String(request);
      }
    }).catch(function () { /* the board stays as it was; the next step tries again */ });
  }

  function markCurrent(index) {
    var rows = movesBody.querySelectorAll("tr");
    var current = null;
    rows.forEach(function (row) {
      var isCurrent = Number(row.dataset.index) === index && !row.classList.contains("rejected");
      row.classList.toggle("current", isCurrent);
      if (isCurrent) { current = row; }
    });
    if (current) {
      // Scroll the move list's own box, never the page: on a phone the board stays in view.
      var box = movesBody.closest(".moves-wrap");
      var top = current.getBoundingClientRect().top - box.getBoundingClientRect().top + box.scrollTop;
      var bottom = top + current.offsetHeight;
      if (top < box.scrollTop + 30) { box.scrollTop = Math.max(0, top - 30); }
      else if (bottom > box.scrollTop + box.clientHeight) {
        box.scrollTop = bottom - box.clientHeight;
      }
    }
  }

  // --- replay ---------------------------------------------------------------------------
  function replay() {
    var positions = data.positions;
    var last = positions.length - 1;
    var slider = document.getElementById("slider");
    var label = document.getElementById("position-label");
    var playButton = document.getElementById("play");
    var analyzeLink = document.getElementById("analyze-link");
    var index = last;
    var timer = null;

    function go(target) {
      index = Math.max(0, Math.min(last, target));
      slider.value = String(index);
      label.textContent = index + " / " + last;
      markCurrent(index);
      history.replaceState(null, "", "#ply=" + index);
      showPosition(positions[index], data.last_moves[index]);
      analyzeLink.href = "/analyze?" + new URLSearchParams({
        game: data.game, moves: data.last_moves.slice(1, index + 1).join(" ")
      }).toString();
      if (index < last) {
        fetchBoard(positions[index + 1], data.last_moves[index + 1]).catch(function () {});
      }
    }

    function stop() {
      if (timer !== null) { clearInterval(timer); timer = null; }
      playButton.textContent = "Play";
    }

    function play() {
      if (timer !== null) { stop(); return; }
      if (index >= last) { go(0); }
      playButton.textContent = "Pause";
      timer = setInterval(function () {
        if (index >= last) { stop(); return; }
        go(index + 1);
      }, 700);
    }

    document.getElementById("first").addEventListener("click", function () { stop(); go(0); });
    document.getElementById("back").addEventListener("click", function () { stop(); go(index - 1); });
    document.getElementById("forward").addEventListener("click", function () { stop(); go(index + 1); });
    document.getElementById("last").addEventListener("click", function () { stop(); go(last); });
    playButton.addEventListener("click", play);
    slider.addEventListener("input", function () { stop(); go(Number(slider.value)); });
    movesBody.addEventListener("click", function (event) {
      var row = event.target.closest("tr");
      if (row) { stop(); go(Number(row.dataset.index)); }
    });
    document.addEventListener("keydown", function (event) {
      if (event.target === slider || event.target.tagName === "INPUT") { return; }
      var keys = {ArrowLeft: -1, ArrowRight: 1};
      if (event.key in keys) { stop(); go(index + keys[event.key]); }
      else if (event.key === "Home") { stop(); go(0); }
      else if (event.key === "End") { stop(); go(last); }
      else if (event.key === " " && event.target.tagName !== "BUTTON") { play(); }
      else { return; }
      event.preventDefault();
    });

    function fromHash() {
      var found = /^#ply=(\d+)$/.exec(location.hash);
      return found ? Number(found[1]) : last;
    }
    // An address edited by hand, or Back and Forward, moves the replay too.
    window.addEventListener("hashchange", function () { stop(); go(fromHash()); });
    go(fromHash());
  }

  // --- live -----------------------------------------------------------------------------
  function live() {
    var clocks = Array.prototype.slice.call(document.querySelectorAll(".clock"));
    var banks = [];
    var thinking = null;  // {seat, moveMs, since}
    var ended = false;
    var retryMs = 500;
    var restarting = false;  // told shutting_down: say so until the stream is back
    var seatMoves = 0;
    var resultBox = document.getElementById("result");

    function seconds(ms) {
      ms = Math.max(0, ms);
      if (ms >= 60000) {
        var s = Math.floor(ms / 1000);
        return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
      }
      return (ms / 1000).toFixed(1) + " s";
    }

    function drawClocks() {
      var now = performance.now();
      clocks.forEach(function (clock) {
        var seat = Number(clock.dataset.seat);
        var bank = banks[seat] || 0;
        var hasBank = data.bank_ms > 0;
        if (thinking && thinking.seat === seat) {
          var spent = now - thinking.since;
          var moveLeft = thinking.moveMs - spent;
          var bankLeft = bank - Math.max(0, spent - thinking.moveMs);
          clock.textContent = seconds(moveLeft) + (hasBank ? " + " + seconds(bankLeft) : "");
          clock.classList.add("running");
        } else {
          // Waiting: what its next move will have (the per-move limit, then its bank).
          clock.textContent = hasBank ? seconds(data.move_ms) + " + " + seconds(bank)
            : seconds(data.move_ms);
          clock.classList.remove("running");
        }
      });
    }
    setInterval(function () { if (thinking) { drawClocks(); } }, 100);

    function addRow(event) {
      var seat = event.seat;
      var row = document.createElement("tr");
      row.dataset.index = String(movesBody.rows.length + 1);
      row.className = seat === null ? "dice" : "seat-" + seat;
      if (event.forced) { row.classList.add("forced"); }
      var cells = [String(event.ply), seat === null ? "dice" : data.labels[seat]];
      cells.forEach(function (text, i) {
        var cell = document.createElement("td");
        cell.textContent = text;
        if (i === 0) { cell.className = "num"; }
        row.appendChild(cell);
      });
      var moveCell = document.createElement("td");
      moveCell.className = "move";
      var code = document.createElement("code");
      code.textContent = event.move;
      moveCell.appendChild(code);
      if (event.forced) {
        var tag = document.createElement("span");
        tag.className = "tag forced";
        tag.textContent = "forced (" + String(event.forced).replace("_", " ") + ")";
        moveCell.appendChild(document.createTextNode(" "));
        moveCell.appendChild(tag);
      }
      row.appendChild(moveCell);
      movesBody.appendChild(row);
      markCurrent(Number(row.dataset.index));
    }

    function onMessage(message) {
      switch (message.type) {
        case "watch_start":
          retryMs = 500;
          restarting = false;
          movesBody.textContent = "";
          (message.moves || []).forEach(addRow);
          seatMoves = (message.moves || []).filter(function (m) { return m.seat !== null; }).length;
          banks = (message.clocks_ms || []).slice();
          thinking = null;
          if (message.to_move !== null && message.move_ms !== null) {
            thinking = {seat: message.to_move, moveMs: message.move_ms, since: performance.now()};
          }
          var moves = message.moves || [];
          showPosition(message.position, moves.length ? moves[moves.length - 1].move : null);
          drawClocks();
          if (message.status && message.status !== "running") { finish(); break; }
          // Up to date again (after a reconnection or a restart, the earlier notice goes).
          resultBox.textContent = "Being played: " + seatMoves + (seatMoves === 1 ? " move" : " moves") + " so far." +
            (thinking ? "" : " Waiting for the next turn (after a restart: for the bots to reconnect).");
          break;
        case "move":
          addRow(message);
          if (message.clocks_ms) { banks = message.clocks_ms.slice(); }
          thinking = null;
          showPosition(message.position, message.move);
          drawClocks();
          if (message.seat !== null) { seatMoves += 1; }
          resultBox.textContent = "Being played: " + seatMoves + (seatMoves === 1 ? " move" : " moves") + " so far.";
          break;
        case "turn":
          if (message.clocks_ms) { banks = message.clocks_ms.slice(); }
          thinking = {seat: message.seat, moveMs: message.move_ms, since: performance.now()};
          drawClocks();
          break;
        case "match_end":
          if (message.position) { showPosition(message.position); }
          finish();
          break;
        case "error":
          // A restart keeps the match: the stream comes back with it (see connect()).
          restarting = restarting || message.code === "shutting_down";
          resultBox.textContent = message.code === "shutting_down"
            ? "The server is restarting: the match goes on once it is back…"
            : message.message;
          break;
        default:
          break;  // newer stream versions may add messages: ignore what is not known
      }
    }

    function finish() {
      ended = true;
      thinking = null;
      drawClocks();
      resultBox.textContent = "The match is over: loading its replay…";
      // The replay page says how it ended, in words, with the whole record. Reload only once
      // the server answers: a match may end while the server goes down (a stop right after
      // the last move), and a reload then would leave the browser's own error page, which
      // never comes back.
      reloadWhenServed(1500);
    }

    function reloadWhenServed(waitMs) {
      setTimeout(function () {
        fetch(location.pathname, {method: "HEAD", cache: "no-store"}).then(function (response) {
          if (response.ok) { location.reload(); } else { retry(); }
        }, retry);
      }, waitMs);
      function retry() {
        resultBox.textContent = "The match is over; the server is not answering: trying again…";
        reloadWhenServed(Math.min(waitMs * 2, 10000));
      }
    }

    function connect() {
      var scheme = location.protocol === "https:" ? "wss://" : "ws://";
      var socket = new WebSocket(scheme + location.host + data.watch);
      socket.addEventListener("message", function (event) {
        try { onMessage(JSON.parse(event.data)); } catch (error) { /* a broken frame: skip */ }
      });
      socket.addEventListener("close", function (event) {
        if (ended) { return; }
        // No clock runs while the page cannot see the match (a restart charges nobody's).
        thinking = null;
        drawClocks();
        if (!restarting && event.code !== 1012) {  // else the restart notice stays
          resultBox.textContent = "Connection to the server lost: reconnecting…";
        }
        // Dropped (a slow tab, a restart): reconnect; the first message resyncs everything.
        setTimeout(connect, retryMs);
        retryMs = Math.min(retryMs * 2, 10000);
      });
    }
    connect();
  }

  if (data.mode === "replay") { replay(); } else { live(); }
}());
