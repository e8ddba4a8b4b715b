// A Ply Arena bot in JavaScript: it plays random legal moves.
//
//   node bot.js URL TOKEN GAME [GAMES]
//   node bot.js ws://127.0.0.1:8000/ws "$TOKEN" connect_four 3
//
// The whole protocol is in docs/protocol.md; this file uses only what a simple bot needs:
// hello -> welcome, join -> joined, match_start, turn -> move, match_end, ping -> pong, error.
// Replace chooseMove() with your own search.
"use strict";

const WebSocket = require("ws");

const PROTOCOL_VERSION = 1;
const [url, token, game, gamesArg] = process.argv.slice(2);
if (!url || !token || !game) {
  console.error("usage: node bot.js URL TOKEN GAME [GAMES]");
  process.exit(2);
}
const wanted = Number(gamesArg || 1); // matches to play before exiting

let started = 0;
let finished = 0;
const mySeat = new Map(); // match_id -> our seat

// turn has: position (the game's JSON form), legal_moves (strings), clocks_ms, move_ms, deadline_ms.
function chooseMove(turn) {
  const moves = turn.legal_moves;
  return moves[Math.floor(Math.random() * moves.length)];
}

const ws = new WebSocket(url);
const send = (message) => ws.send(JSON.stringify(message)); // one JSON object per text frame

ws.on("open", () => {
  send({ type: "hello", protocol: PROTOCOL_VERSION, token, client: "js-example/1.0" });
});

ws.on("message", (data, isBinary) => {
  if (isBinary) return; // the server only sends text frames
  const msg = JSON.parse(data.toString());
  switch (msg.type) {
    case "welcome":
      console.log(`logged in as ${msg.bot}`);
      send({ type: "join", game }); // omit time_control to get the game's default
      break;
    case "joined":
      console.log(`waiting in the ${msg.game} lobby (${msg.waiting} waiting)`);
      break;
    case "match_start":
      started += 1;
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
      if (finished >= wanted) {
        ws.close(1000);
      } else if (started < wanted) {
        send({ type: "join", game }); // the lobby pairs us again
      }
      break;
    }
    case "ping":
      send({ type: "pong", id: msg.id });
      break;
    case "error":
      console.error(`error ${msg.code}: ${msg.message}`);
      if (msg.fatal) process.exitCode = 1;
      break;
    default:
      break; // forced_move, challenge_received, ... are not needed here
  }
});

ws.on("close", () => process.exit(process.exitCode || (finished >= wanted ? 0 : 1)));
ws.on("error", (err) => {
  console.error(`connection error: ${err.message}`);
  process.exit(1);
});
