// A Ply Arena bot in Java 17, using only the JDK: java.net.http.WebSocket and a small JSON reader.
// It plays random legal moves.
//
//   java Bot.java URL TOKEN GAME [GAMES]                      (GAMES 0: play for ever)
//   java Bot.java ws://127.0.0.1:8000/ws "$TOKEN" connect_four 3
//   javac -d out Bot.java && java -cp out Bot ws://127.0.0.1:8000/ws "$TOKEN" connect_four 3
//
// The whole protocol is in docs/protocol.md; this file uses only what a simple bot needs:
// hello -> welcome, join -> joined, match_start, turn -> move, match_end, ping -> pong, error,
// and reconnecting (with backoff) when the connection drops or the server restarts (close code
// 1012): the server resyncs its matches, which a restart keeps.
// Replace chooseMove() with your own search.

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;

public class Bot {
    static final int PROTOCOL_VERSION = 1;
    /** Fatal errors that reconnecting cannot help: fix the cause first. */
    static final Set<String> GIVE_UP = Set.of("bad_token", "bot_disabled", "unsupported_version", "replaced");

    final String url, token, game;
    final long wanted; // matches to play before exiting
    final Random random = new Random();
    final Map<String, Integer> mySeat = new HashMap<>(); // match_id -> our seat
    long started = 0, finished = 0; // a resynced match counts once
    boolean loggedIn = false; // never logged in: a wrong URL or token, so do not retry
    long backoff = 250; // ms before reconnecting; doubles up to 30 s, back to 250 after a welcome
    int exitCode = 0;
    WebSocket ws;

    /** What the listener's thread hands to the main thread: a whole message, or the close. */
    record Event(String text, int closeCode) {}

    final BlockingQueue<Event> events = new LinkedBlockingQueue<>();

    public static void main(String[] args) throws InterruptedException {
        if (args.length < 3) {
            System.err.println("usage: java Bot.java URL TOKEN GAME [GAMES]");
            System.exit(2);
        }
        long games = args.length > 3 ? Long.parseLong(args[3]) : 1;
        int status = new Bot(args[0], args[1], args[2], games == 0 ? Long.MAX_VALUE : games).run();
        System.out.flush();
        System.exit(status);
    }

    Bot(String url, String token, String game, long wanted) {
        this.url = url;
        this.token = token;
        this.game = game;
        this.wanted = wanted;
    }

    // turn has: position (the game's JSON form), legal_moves (strings), clocks_ms, move_ms, deadline_ms.
    String chooseMove(Map<String, Object> turn) {
        List<Object> moves = list(turn.get("legal_moves"));
        return (String) moves.get(random.nextInt(moves.size()));
    }

    int run() throws InterruptedException {
        HttpClient http = HttpClient.newHttpClient();
        while (true) {
            int closeCode;
            try {
                ws = http.newWebSocketBuilder().buildAsync(URI.create(url), new Listener()).join();
                send("{\"type\":\"hello\",\"protocol\":" + PROTOCOL_VERSION + ",\"token\":" + quote(token)
                        + ",\"client\":\"java-example/1.0\"}");
                closeCode = play();
            } catch (CompletionException e) {
                System.err.println("connection error: " + e.getCause());
                closeCode = -1;
            }
            if (finished >= wanted || exitCode != 0) return exitCode;
            if (!loggedIn) return 1;
            if (closeCode == 1012) {
                // The server restarts: our matches are kept and resync once it is back.
                System.out.println("the server is restarting; reconnecting in " + backoff + " ms");
            } else {
                System.out.println("connection lost; reconnecting in " + backoff + " ms");
            }
            Thread.sleep(backoff);
            backoff = Math.min(30000, backoff * 2);
        }
    }

    /** Handle the messages of one connection until it closes; its close code. */
    int play() throws InterruptedException {
        while (true) {
            Event event = events.take();
            if (event.text() == null) return event.closeCode();
            handle(object(Json.parse(event.text())));
            if (finished >= wanted) {
                ws.sendClose(WebSocket.NORMAL_CLOSURE, "").exceptionally(e -> null).join();
                return WebSocket.NORMAL_CLOSURE;
            }
        }
    }

    void handle(Map<String, Object> msg) {
        String matchId = (String) msg.get("match_id");
        switch ((String) msg.get("type")) {
            case "welcome" -> { // msg.matches: our running matches; the server resyncs them next
                System.out.println("logged in as " + msg.get("bot"));
                loggedIn = true;
                backoff = 250;
                if (started < wanted) join(); // queue places do not survive a drop
            }
            case "match_start" -> { // also sent again after a reconnection, as the match stands
                if (!mySeat.containsKey(matchId)) started += 1;
                int seat = (int) number(msg.get("your_seat"));
                mySeat.put(matchId, seat);
                System.out.println("match " + matchId + " started, we are seat " + seat);
            }
            case "turn" -> // Echo match_id and ply; answer well within deadline_ms.
                send("{\"type\":\"move\",\"match_id\":" + quote(matchId) + ",\"ply\":" + number(msg.get("ply"))
                        + ",\"move\":" + quote(chooseMove(msg)) + "}");
            case "match_end" -> {
                finished += 1;
                Integer seat = mySeat.remove(matchId);
                List<Object> payoffs = list(msg.get("payoffs"));
                Object mine = seat != null && seat < payoffs.size() ? payoffs.get(seat) : "?";
                System.out.println("match " + matchId + " ended: " + msg.get("termination") + ", payoff " + mine);
                System.out.println("RESULT " + matchId + " " + msg.get("termination") + " " + payoffs);
                if (finished < wanted && started < wanted) join(); // the lobby pairs us again
            }
            case "ping" -> send("{\"type\":\"pong\",\"id\":" + number(msg.get("id")) + "}");
            case "error" -> {
                System.err.println("error " + msg.get("code") + ": " + msg.get("message"));
                if (GIVE_UP.contains(msg.get("code"))) exitCode = 1;
            }
            default -> {} // joined, forced_move, challenge_received, ... are not needed here
        }
    }

    void join() {
        send("{\"type\":\"join\",\"game\":" + quote(game) + "}");
    }

    /** One JSON object per text frame. Only the main thread sends, one frame at a time. */
    void send(String json) {
        try {
            ws.sendText(json, true).join();
        } catch (CompletionException e) {
            // The connection is closing: its close event follows, and we reconnect then.
        }
    }

    /** Receives on the HttpClient's threads and hands whole messages to the main thread. */
    class Listener implements WebSocket.Listener {
        // A message may arrive in pieces: onText is called for each, `last` true on the final
        // one. Only the joined text is JSON (docs/protocol.md, "Connecting").
        final StringBuilder pieces = new StringBuilder();

        @Override
        public void onOpen(WebSocket webSocket) {
            webSocket.request(1);
        }

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            pieces.append(data);
            if (last) {
                events.add(new Event(pieces.toString(), 0));
                pieces.setLength(0);
            }
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
            webSocket.request(1); // the server sends only text frames
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            events.add(new Event(null, statusCode)); // the JDK answers the close frame itself
            return null;
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            System.err.println("connection error: " + error);
            events.add(new Event(null, -1));
        }
    }

    // --- JSON: the little this bot needs -------------------------------------------------------

    @SuppressWarnings("unchecked")
    static Map<String, Object> object(Object value) {
        return (Map<String, Object>) value;
    }

    @SuppressWarnings("unchecked")
    static List<Object> list(Object value) {
        return (List<Object>) value;
    }

    /** A JSON number as the integer it is (plies, ids and seats are integers on the wire). */
    static long number(Object value) {
        return (long) (double) (Double) value;
    }

    static String quote(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                default -> {
                    if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
                    else out.append(c);
                }
            }
        }
        return out.append('"').toString();
    }

    /** Objects become Maps, arrays Lists, numbers Doubles; strings, booleans and null as is. */
    static final class Json {
        final String s;
        int i = 0;

        Json(String s) {
            this.s = s;
        }

        static Object parse(String text) {
            Json json = new Json(text);
            Object value = json.value();
            json.space();
            if (json.i != text.length()) throw json.error();
            return value;
        }

        Object value() {
            space();
            if (i >= s.length()) throw error();
            char c = s.charAt(i);
            if (c == '{') return objectValue();
            if (c == '[') return arrayValue();
            if (c == '"') return string();
            if (s.startsWith("true", i)) return literal(4, Boolean.TRUE);
            if (s.startsWith("false", i)) return literal(5, Boolean.FALSE);
            if (s.startsWith("null", i)) return literal(4, null);
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
            if (start == i) throw error();
            return Double.parseDouble(s.substring(start, i));
        }

        Object literal(int length, Object value) {
            i += length;
            return value;
        }

        Map<String, Object> objectValue() {
            Map<String, Object> map = new LinkedHashMap<>();
            i++; // {
            space();
            if (peek() == '}') {
                i++;
                return map;
            }
            while (true) {
                space();
                String key = string();
                space();
                expect(':');
                map.put(key, value());
                space();
                if (peek() == '}') {
                    i++;
                    return map;
                }
                expect(',');
            }
        }

        List<Object> arrayValue() {
            List<Object> items = new ArrayList<>();
            i++; // [
            space();
            if (peek() == ']') {
                i++;
                return items;
            }
            while (true) {
                items.add(value());
                space();
                if (peek() == ']') {
                    i++;
                    return items;
                }
                expect(',');
            }
        }

        String string() {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (true) {
                char c = s.charAt(i++);
                if (c == '"') return out.toString();
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                char e = s.charAt(i++);
                switch (e) {
                    case 'n' -> out.append('\n');
                    case 't' -> out.append('\t');
                    case 'r' -> out.append('\r');
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'u' -> {
                        out.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        i += 4;
                    }
                    default -> out.append(e); // \" \\ \/
                }
            }
        }

        char peek() {
            if (i >= s.length()) throw error();
            return s.charAt(i);
        }

        void expect(char c) {
            if (peek() != c) throw error();
            i++;
        }

        void space() {
            while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) i++;
        }

        IllegalArgumentException error() {
            return new IllegalArgumentException("not JSON at character " + i + ": " + s);
        }
    }
}
