"""Tournaments over REST: created and steered by the admin or the class's instructor, read by
anyone.

    POST /api/tournaments                       create (admin, or an instructor for its class)
    GET  /api/tournaments[?class=NAME]          list
    GET  /api/tournaments/{name}                standings, crosstable, rounds and their matches
    POST /api/tournaments/{name}/start|pause|resume|cancel
    GET  /api/tournaments/{name}/export?what=standings|matches&format=csv|json
    GET  /api/tournaments/{name}/grades.csv     one row per bot of the class, with its owner

A tournament of a class (made by its instructor, or by the admin with ``"class"``) is managed by
that class's instructor and the admin; one made by the admin from a list of bots by the admin
only. The grade sheet names owners, so it is for those same callers only.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ply_arena import games
from ply_arena.protocol.errors import ErrorCode
from ply_arena.protocol.wire import clip
from ply_arena.server import time_controls
from ply_arena.server.api.auth import Caller, admin_or_instructor
from ply_arena.server.api.body import read_json_body
from ply_arena.server.api.errors import ApiError
from ply_arena.server.db.models import Bot, Classroom, Tournament
from ply_arena.server.repositories import bots as bot_repo
from ply_arena.server.repositories import classes as class_repo
from ply_arena.server.repositories import tournament_directors as direction_repo
from ply_arena.server.repositories import tournaments as repo
from ply_arena.server.repositories.matches import iso
from ply_arena.server.tournaments import export
from ply_arena.server.tournaments.spec import Format, TournamentRequest
from ply_arena.server.tournaments.table import read_document

#: Which state each action may start from, and where it leads.
TRANSITIONS = {
    "start": ({"created"}, "running"),
    "pause": ({"running"}, "paused"),
    "resume": ({"paused"}, "running"),
    "cancel": ({"created", "running", "paused"}, "cancelled"),
}


async def create_tournament(request: Request) -> JSONResponse:
    # Who asks first: nobody learns how to make a tournament without a token that may.
    async with request.app.state.database.session() as session:
        await admin_or_instructor(request, session)
    body = await read_json_body(request)
    try:
        spec = TournamentRequest.model_validate(body)
    except ValidationError as exc:
        raise ApiError(*_validation_error(exc)) from None
    referee = request.app.state.referee
    async with request.app.state.database.session() as session:
        caller = await admin_or_instructor(request, session)
        try:
            game = games.get(spec.game)
        except ValueError as exc:
            raise ApiError(400, ErrorCode.unknown_game, str(exc)) from None
        try:
            tc = time_controls.resolve_time_control(game.name, spec.time_control)
        except ValueError as exc:
            raise ApiError(400, ErrorCode.bad_time_control, str(exc)) from None
        classroom = await _classroom_for(session, caller, spec)
        entrants = await _entrants(session, caller, spec, classroom)
        pool = await _bots(session, caller, spec.pool or [], "pool", allow_house=True)
        _check_shape(spec, game, entrants, pool)
        # Seeds: the best rated first (then by name), so that a Swiss tournament's first round
        # and its tie-breaks among equal scores follow strength.
        entrants.sort(key=lambda b: (-referee.ratings.mu(b.id, game.name), b.name.lower()))
        try:
            tournament = await repo.create_tournament(
                session,
                name=spec.name,
                game=game.name,
                format=spec.format.value,
                rounds=spec.rounds,
                move_ms=tc.move_ms,
                bank_ms=tc.bank_ms,
                policy=spec.policy.value,
                concurrency=spec.concurrency,
                rated=spec.rated,
                no_show_s=float(spec.no_show_s),
                classroom=classroom,
                entrants=entrants,
                pool=pool,
            )
        except repo.TournamentNameError as exc:
            raise ApiError(400, ErrorCode.bad_request, str(exc)) from None
        except repo.TournamentExistsError as exc:
            raise ApiError(409, ErrorCode.conflict, str(exc)) from None
        document = await _document(request, session, tournament)
    return JSONResponse(document, status_code=201)


async def list_tournaments(request: Request) -> JSONResponse:
    class_name = request.query_params.get("class")
    async with request.app.state.database.session() as session:
        class_id = None
        if class_name is not None:
            classroom = await class_repo.class_by_name(session, class_name)
            if classroom is None:
                raise ApiError(
                    404, ErrorCode.not_found, f"no class named {clip(repr(class_name), 80)}"
                )
            class_id = classroom.id
        found = await repo.list_tournaments(session, class_id=class_id)
        names = await _class_names(session)
        listed = [summary(t, names.get(t.class_id or 0)) for t in found]
    return JSONResponse({"tournaments": listed})


def summary(tournament: Tournament, class_name: str | None) -> dict[str, Any]:
    return {
        "name": tournament.name,
        "game": tournament.game,
        "format": tournament.format,
        "rounds": tournament.rounds,
        "status": tournament.status,
        "class": class_name,
        "created_at": iso(tournament.created_at),
    }


async def get_tournament(request: Request) -> JSONResponse:
    async with request.app.state.database.session() as session:
        tournament = await _tournament(request, session)
        return JSONResponse(await _document(request, session, tournament))


async def start(request: Request) -> JSONResponse:
    return await _act(request, "start")


async def pause(request: Request) -> JSONResponse:
    return await _act(request, "pause")


async def resume(request: Request) -> JSONResponse:
    return await _act(request, "resume")


async def cancel(request: Request) -> JSONResponse:
    return await _act(request, "cancel")


async def _act(request: Request, action: str) -> JSONResponse:
    allowed, target = TRANSITIONS[action]
    async with request.app.state.database.session() as session:
        caller = await admin_or_instructor(request, session)
        tournament = await _tournament(request, session)
        _may_manage(caller, tournament)
        if tournament.status not in allowed:
            raise ApiError(
                409,
                ErrorCode.conflict,
                f"tournament {tournament.name!r} is {tournament.status}: "
                f"{action} needs it {' or '.join(sorted(allowed))}",
            )
        await repo.set_status(session, tournament, target)
        tournament_id = tournament.id
        owner = request.app.state.referee.owner
        if target == "running" and owner is not None:
            # The process that starts (or resumes) it directs it, unless a live one does
            # (server/tournaments/director.py): claimed with the status, in one transaction.
            await direction_repo.take_on_start(session, tournament_id, owner)
    directors = request.app.state.tournaments
    if target == "running":
        directors.run(tournament_id)
    else:
        directors.steer(tournament_id)
    if target == "cancelled":
        # Its games under way end now, aborted and unrated: none of them counts.
        await directors.cancel_games(tournament_id)
    async with request.app.state.database.session() as session:
        tournament = await repo.tournament_by_id(session, tournament_id)
        return JSONResponse(await _document(request, session, tournament))


async def export_tournament(request: Request) -> Response:
    what = request.query_params.get("what", "standings")
    fmt = request.query_params.get("format", "csv")
    if what not in ("standings", "matches") or fmt not in ("csv", "json"):
        raise ApiError(
            400,
            ErrorCode.bad_request,
            "export takes what=standings|matches and format=csv|json "
            "(for example ?what=matches&format=csv)",
        )
    async with request.app.state.database.session() as session:
        tournament = await _tournament(request, session)
        document = await _document(request, session, tournament)
    filename = f"{tournament.name}-{what}.{fmt}"
    headers = {"Content-Disposition": f'attachment; filename="{filename}"'}
    if fmt == "json":
        body: Any = document["standings"] if what == "standings" else export.match_rows(document)
        return JSONResponse({"tournament": tournament.name, what: body}, headers=headers)
    text = export.standings_csv(document) if what == "standings" else export.matches_csv(document)
    return Response(text, media_type="text/csv; charset=utf-8", headers=headers)


async def grades(request: Request) -> Response:
    async with request.app.state.database.session() as session:
        caller = await admin_or_instructor(request, session)
        tournament = await _tournament(request, session)
        _may_manage(caller, tournament)
        document = await _document(request, session, tournament)
        people = await repo.participants(session, tournament)
        # Once the tournament is over, the ratings it ended with (the sheet must not change
        # with the matches played after it); while it runs, the ratings as they are now.
        if tournament.status in ("finished", "cancelled"):
            ratings = await repo.final_ratings(session, tournament)
        else:
            live = await repo.ratings_in(session, tournament.game, [p.bot_id for p in people])
            ratings = {b: (r.mu, r.sigma, r.conservative) for b, r in live.items()}
    class_id = tournament.class_id
    rows = [
        p for p in people if p.role == "entrant" and (class_id is None or p.class_id == class_id)
    ]
    text = export.grades_csv(document, rows, ratings)
    filename = f"{tournament.name}-grades.csv"
    return Response(
        text,
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


# --- helpers ---------------------------------------------------------------------------------


async def _document(
    request: Request, session: AsyncSession, tournament: Tournament
) -> dict[str, Any]:
    live = await request.app.state.referee.live_match_ids()
    return await read_document(session, tournament, live)


async def _tournament(request: Request, session: AsyncSession) -> Tournament:
    name = request.path_params["name"]
    tournament = await repo.tournament_by_name(session, name)
    if tournament is None:
        raise ApiError(404, ErrorCode.not_found, f"no tournament named {clip(repr(name), 80)}")
    return tournament


def _may_manage(caller: Caller, tournament: Tournament) -> None:
    if caller.admin:
        return
    if tournament.class_id is None or tournament.class_id != caller.classroom_id:
        raise ApiError(
            403,
            ErrorCode.forbidden,
            f"tournament {tournament.name!r} is not your class's: an instructor manages its "
            "class's tournaments only",
        )


async def _class_names(session: AsyncSession) -> dict[int, str]:
    return {c.id: c.name for c in await class_repo.list_classes(session)}


async def _classroom_for(
    session: AsyncSession, caller: Caller, spec: TournamentRequest
) -> Classroom | None:
    """The tournament's class: the one named, or an instructor's own."""
    if spec.class_ is not None:
        classroom = await class_repo.class_by_name(session, spec.class_)
        if classroom is None:
            raise ApiError(
                400, ErrorCode.bad_request, f"no class named {clip(repr(spec.class_), 80)}"
            )
        if not caller.admin and classroom.id != caller.classroom_id:
            raise ApiError(
                403,
                ErrorCode.forbidden,
                f"an instructor's token reaches its own class only, not {classroom.name!r}",
            )
        return classroom
    if caller.admin:
        return None
    assert caller.classroom_id is not None
    return await session.get(Classroom, caller.classroom_id)


async def _entrants(
    session: AsyncSession, caller: Caller, spec: TournamentRequest, classroom: Classroom | None
) -> list[Bot]:
    if spec.bots is not None:
        found = await _bots(session, caller, spec.bots, "bots", allow_house=True)
        if classroom is not None:
            # "class" with "bots": a tournament of the class among these of its bots.
            outside = [b.name for b in found if b.class_id != classroom.id and not b.house]
            if outside:
                raise ApiError(
                    403 if not caller.admin else 400,
                    ErrorCode.forbidden if not caller.admin else ErrorCode.bad_request,
                    f"bot {outside[0]!r} is not in class {classroom.name!r}: a class's "
                    "tournament takes its bots (and house bots) only",
                )
        return found
    if classroom is None:
        raise ApiError(
            400,
            ErrorCode.invalid_message,
            'say who takes part: "class": NAME (its enabled bots) or "bots": [NAME, ...]',
        )
    # A bot made for checking (it logged in as an arena check-bot checker) is no entrant
    # unless named in "bots".
    return [
        b for b in await class_repo.class_bots(session, classroom) if b.enabled and not b.checker
    ]


async def _bots(
    session: AsyncSession, caller: Caller, names: list[str], field: str, *, allow_house: bool
) -> list[Bot]:
    found: list[Bot] = []
    seen: set[str] = set()
    for name in names:
        if name.lower() in seen:
            raise ApiError(400, ErrorCode.invalid_message, f"{field}: {name!r} is named twice")
        seen.add(name.lower())
        bot = await bot_repo.bot_by_name(session, name)
        if bot is None:
            raise ApiError(
                400, ErrorCode.unknown_bot, f"{field}: no bot named {clip(repr(name), 80)}"
            )
        if not bot.enabled:
            raise ApiError(400, ErrorCode.bot_disabled, f"{field}: bot {bot.name!r} is disabled")
        if bot.house and not allow_house:
            raise ApiError(400, ErrorCode.invalid_message, f"{field}: {bot.name!r} is a house bot")
        if not caller.admin and not bot.house and bot.class_id != caller.classroom_id:
            raise ApiError(
                403,
                ErrorCode.forbidden,
                f"bot {bot.name!r} is not in your class: an instructor's tournament takes its "
                "class's bots (and house bots) only",
            )
        found.append(bot)
    return found


def _check_shape(
    spec: TournamentRequest, game: games.Game, entrants: list[Bot], pool: list[Bot]
) -> None:
    n = len(entrants)
    players = game.num_players

    def refuse(why: str) -> None:
        raise ApiError(400, ErrorCode.bad_request, why)

    if spec.format is Format.gauntlet:
        if players != 2:
            refuse(f"a gauntlet is for two-player games; {game.name} has {players} players")
        if not pool:
            refuse('a gauntlet needs a "pool": the bots (reference agents) every entrant meets')
        if n < 1:
            refuse("a gauntlet needs at least one entrant")
        if {b.id for b in pool} & {b.id for b in entrants}:
            refuse("a bot cannot be both an entrant and in the pool")
        return
    if pool:
        refuse('"pool" is for gauntlets only')
    if spec.format is Format.swiss:
        if players != 2:
            refuse(f"Swiss pairing is for two-player games; {game.name} has {players} players")
        if n < 2:
            refuse("a Swiss tournament needs at least two entrants")
        if spec.rounds > n - 1:
            refuse(
                f"a Swiss tournament of {n} entrants has at most {n - 1} rounds (no rematches); "
                f"asked for {spec.rounds}"
            )
        return
    if n < players:
        listed = (
            ' ("bots" lists every entrant: with "class" too, the class\'s other bots are not added)'
            if spec.bots is not None
            else ""
        )
        refuse(
            f"a round robin of {game.name} needs at least {players} entrants; it has {n}{listed}"
        )


def _validation_error(exc: ValidationError) -> tuple[int, ErrorCode, str]:
    """400 and what is wrong: ``bad_time_control`` for the time control, else
    ``invalid_message``."""
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"]) or "body"
    code = (
        ErrorCode.bad_time_control
        if where.startswith("time_control")
        else ErrorCode.invalid_message
    )
    return (
        400,
        code,
        f"{where}: {error['msg']} (the body is a JSON object: name, game, format "
        "(round_robin|swiss|gauntlet), and class or bots; see docs/server.md)",
    )
