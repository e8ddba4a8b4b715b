// A Ply Arena bot in JavaScript: it plays random legal moves.
//
//   node bot.js URL TOKEN GAME [GAMES]
//   node bot.js ws://127.0.0.1:8000/ws "$TOKEN" connect_four 3     (GAMES 0: play for ever)
//
// The whole protocol is in docs/protocol.md; this file uses only what a simple bot needs:
// hello -> welcome, join -> joined, match_start, turn -> move, match_end, ping -> pong, error,
// and reconnecting (with backoff) when the connection drops or the server restarts (close code
// 1012): the server resyncs its matches, which a restart keeps.
// Replace chooseMove() with your own search.
"use strict";

const WebSocket = require("ws");

const PROTOCOL_VERSION = 1;
const [url, token, game, gamesArg] = process.argv.slice(2);
if (!url || !token || !game) {
  console.error("usage: node bot.js URL TOKEN GAME [GAMES]");
  process.exit(2);
}
const wanted = Number(gamesArg || 1) || Infinity; // matches to play before exiting (0: for ever)

let started = 0; // matches started (a resynced one counts once)
let finished = 0;
let loggedIn = false; // never logged in: a wrong URL or token, so do not retry
let backoff = 250; // ms before reconnecting; doubles up to 30 s, back to 250 after a welcome
const mySeat = new Map(); // match_id -> our seat

// turn has: position (the game's JSON form), legal_moves (strings), clocks_ms, move_ms, deadline_ms.
function chooseMove(turn) {
  const moves = turn.legal_moves;
  return moves[Math.floor(Math.random() * moves.length)];
}

let ws;
const send = (message) => ws.send(JSON.stringify(message)); // one JSON object per text frame

function connect() {
  ws = new WebSocket(url);
  ws.on("open", () => {
    send({ type: "hello", protocol: PROTOCOL_VERSION, token, client: "js-example/1.0" });
  });
  ws.on("message", (data, isBinary) => {
    if (!isBinary) handle(JSON.parse(data.toString())); // the server only sends text frames
  });
  ws.on("close", (code) => {
    if (finished >= wanted || process.exitCode) process.exit(process.exitCode);
    if (!loggedIn) process.exit(1);
    if (code === 1012) {
      // The server restarts: our matches are kept and resync once it is back.
      console.log(`the server is restarting; reconnecting in ${backoff} ms`);
    } else {
      console.log(`connection lost; reconnecting in ${backoff} ms`);
    }
    setTimeout(connect, backoff);
    backoff = Math.min(30000, backoff * 2);
  });
  ws.on("error", (err) => console.error(`connection error: ${err.message}`)); // "close" follows
}

function handle(msg) {
  switch (msg.type) {
    case "welcome": // msg.matches: our running matches; the server resyncs them next
      console.log(`logged in as ${msg.bot}`);
      loggedIn = true;
      backoff = 250;
      if (started < wanted) send({ type: "join", game }); // queue places do not survive a drop
      break;
    case "match_start": // also sent again after a reconnection, with the position as it stands
      if (!mySeat.has(msg.match_id)) started += 1;
      mySeat.set(msg.match_id, msg.your_seat);
      console.log(`match ${msg.match_id} started, we are seat ${msg.your_seat}`);
      break;
    case "turn":
      // Echo match_id and ply; answer well within deadline_ms.
      send({ type: "move", match_id: msg.match_id, ply: msg.ply, move: chooseMove(msg) });
      break;
    case "match_end": {
      finished += 1;
      const seat = mySeat.get(msg.match_id);
      console.log(`match ${msg.match_id} ended: ${msg.termination}, payoff ${msg.payoffs[seat]}`);
      console.log(`RESULT ${msg.match_id} ${msg.termination} ${JSON.stringify(msg.payoffs)}`);
      mySeat.delete(msg.match_id);
      if (finished >= wanted) ws.close(1000);
      else if (started < wanted) send({ type: "join", game }); // the lobby pairs us again
      break;
    }
    case "ping":
      send({ type: "pong", id: msg.id });
      break;
    case "error":
      console.error(`error ${msg.code}: ${msg.message}`);
      if (["bad_token", "bot_disabled", "unsupported_version", "replaced"].includes(msg.code)) {
        process.exitCode = 1; // reconnecting cannot help: fix the cause first
      }
      break;
    default:
      break; // forced_move, challenge_received, ... are not needed here
  }
}

connect();
