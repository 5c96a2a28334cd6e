"""Every sentence the terminal client shows a player, in English and Turkish.

The client's own words live here; the rules' and services' sentences (a rejected move, a bad
token) come from the server in the player's language (the requests' ``locale``), so the
client never translates an error itself. A test checks that both languages have every key and
name the same parameters, and that every key the client uses exists.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Final, Literal

from okey101.client.shown import shown
from okey101.engine.sentences import sentence_case

Language = Literal["en", "tr"]
LANGUAGES: Final[tuple[Language, ...]] = ("en", "tr")

CATALOGUE: Final[Mapping[str, Mapping[Language, str]]] = {
    # The frame.
    "title": {"en": "Okey 101", "tr": "Okey 101"},
    "subtitle_table": {
        "en": "table {table} · {rules} · hand {hand}",
        "tr": "masa {table} · {rules} · {hand}. el",
    },
    "subtitle_watch": {
        "en": "watching table {table} · {rules} · hand {hand}",
        "tr": "{table} masası izleniyor · {rules} · {hand}. el",
    },
    "target_total": {"en": "to {target}", "tr": "{target} puanlık maç"},
    "target_hands": {"en": "of {hands} hands", "tr": "{hands} ellik maç"},
    "logging_in": {"en": "Logging in…", "tr": "Giriş yapılıyor…"},
    "logged_in": {"en": "Logged in as {name}.", "tr": "{name} olarak giriş yaptın."},
    "queue_waiting": {
        "en": "Looking for a table ({players} waiting); bots fill the empty seats at {time}.",
        "tr": "Masa aranıyor ({players} kişi bekliyor); boş koltuklara {time} itibarıyla bot "
        "oturacak.",
    },
    "no_table": {
        "en": "No table was found in time; try again.",
        "tr": "Zamanında masa bulunamadı; tekrar dene.",
    },
    "cannot_start": {"en": "Could not start: {reason}", "tr": "Başlatılamadı: {reason}"},
    "queue_cancelled": {
        "en": "The quick-match ticket was cancelled.",
        "tr": "Hızlı oyun bileti iptal edildi.",
    },
    "seated": {
        "en": "Seated at table {table}, seat {seat}.",
        "tr": "{table} masasında {seat}. koltuğa oturdun.",
    },
    "back_at_table": {
        "en": "Back at table {table}, where your match is still on.",
        "tr": "Maçının sürdüğü {table} masasına döndün.",
    },
    "logged_in_balance": {
        "en": "Logged in as {name}; balance {chips} chips.",
        "tr": "{name} olarak giriş yaptın; bakiyen {chips} çip.",
    },
    "waiting_for_deal": {"en": "Waiting for the deal…", "tr": "Dağıtım bekleniyor…"},
    # Chips: the balance, the stake and the pot, the payout, the wallet's history.
    "chips_balance": {"en": "balance {chips}", "tr": "bakiye {chips}"},
    "chips_held": {"en": "in play {chips}", "tr": "masada {chips}"},
    "chips_stake": {"en": "stake {chips}", "tr": "bahis {chips}"},
    "chips_pot": {"en": "pot {chips}", "tr": "pot {chips}"},
    "payout_waiting": {"en": "Paying out the pot…", "tr": "Pot dağıtılıyor…"},
    "payout_paid": {
        "en": "Your winnings: +{chips} chips (stake {stake}).",
        "tr": "Kazancın: +{chips} çip (bahis {stake}).",
    },
    "payout_none": {
        "en": "No winnings this time: your stake of {stake} chips went to the pot.",
        "tr": "Bu sefer kazanç yok: {stake} çiplik bahsin pota gitti.",
    },
    "payout_late": {
        "en": "Your winnings are not in your wallet yet; w shows its history.",
        "tr": "Kazancın henüz hesabına geçmedi; w ile çip geçmişine bak.",
    },
    "wallet_title": {"en": "Wallet history", "tr": "Çip geçmişi"},
    "wallet_empty": {"en": "No chips have moved yet.", "tr": "Henüz çip hareketi yok."},
    "wallet_more": {"en": "n: older entries", "tr": "n: daha eski hareketler"},
    "wallet_keys": {"en": "Enter: back to the table", "tr": "Enter: masaya dön"},
    "col_when": {"en": "When", "tr": "Tarih"},
    "col_what": {"en": "What", "tr": "Hareket"},
    "col_amount": {"en": "Chips", "tr": "Çip"},
    "col_after": {"en": "Balance", "tr": "Bakiye"},
    "col_for": {"en": "Table or tournament", "tr": "Masa ya da turnuva"},
    "entry_grant": {"en": "Starting chips", "tr": "Başlangıç çipi"},
    "entry_daily_grant": {"en": "Daily chips", "tr": "Günlük çip"},
    "entry_stake": {"en": "Stake", "tr": "Bahis"},
    "entry_payout": {"en": "Winnings", "tr": "Kazanç"},
    "entry_fee": {"en": "Table fee", "tr": "Masa ücreti"},
    "entry_refund": {"en": "Refund", "tr": "İade"},
    "entry_prize": {"en": "Tournament prize", "tr": "Turnuva ödülü"},
    "entry_entry_fee": {"en": "Entry fee", "tr": "Katılım ücreti"},
    "entry_adjustment": {"en": "Adjustment by the operator", "tr": "Yönetici düzeltmesi"},
    "entry_other": {"en": "Other", "tr": "Diğer"},
    "entry_table": {"en": "table {id}", "tr": "{id} masası"},
    "entry_tournament": {"en": "tournament {id}", "tr": "{id} turnuvası"},
    "connection_lost": {
        "en": "Connection lost ({reason}); reconnecting…",
        "tr": "Bağlantı koptu ({reason}); yeniden bağlanılıyor…",
    },
    "reconnected": {
        "en": "Reconnected; carried on from event {sequence}.",
        "tr": "Yeniden bağlandın; {sequence}. olaydan devam ediliyor.",
    },
    "table_closed": {"en": "The table was closed.", "tr": "Masa kapatıldı."},
    # Seats.
    "seat_label": {"en": "Seat {seat}", "tr": "{seat}. koltuk"},
    "you": {"en": "you", "tr": "sen"},
    "bot": {"en": "bot", "tr": "bot"},
    "empty_seat": {"en": "empty", "tr": "boş"},
    "away": {"en": "away", "tr": "uzakta"},
    "tile_count": {"en": "{count} tiles", "tr": "{count} taş"},
    "not_opened": {"en": "not opened", "tr": "açılmamış"},
    "opened_runs": {"en": "opened with runs", "tr": "seriyle açık"},
    "opened_pairs": {"en": "opened with pairs", "tr": "çiftle açık"},
    "opened_pairs_count": {"en": "opened with {count} pairs", "tr": "{count} çiftle açık"},
    "opened_runs_value": {"en": "opened with runs ({value})", "tr": "seriyle açık ({value})"},
    "penalty_points": {"en": "penalty +{points}", "tr": "ceza +{points}"},
    "last_discard": {"en": "discard {tile}", "tr": "attığı {tile}"},
    "no_discard": {"en": "no discard", "tr": "atılan yok"},
    "match_total": {"en": "total {points}", "tr": "toplam {points}"},
    "dealer_mark": {"en": "dealer", "tr": "dağıtan"},
    # The state line.
    "turn_you": {"en": "Your turn: {phase}", "tr": "Sıra sende: {phase}"},
    "turn_other": {"en": "{name} to move: {phase}", "tr": "Sıra: {name} · {phase}"},
    "phase_first": {"en": "play and discard", "tr": "aç ya da at"},
    "phase_draw": {"en": "draw or take", "tr": "çek ya da al"},
    "phase_play": {"en": "play, then discard", "tr": "oyna, sonra at"},
    "phase_ended": {"en": "the hand is over", "tr": "el bitti"},
    "hand_over": {"en": "The hand is over", "tr": "El bitti"},
    "seconds_left": {"en": "{seconds} s", "tr": "{seconds} sn"},
    "stock": {"en": "stock {count}", "tr": "ortada {count}"},
    "indicator": {"en": "indicator {tile}", "tr": "gösterge {tile}"},
    "okey_is": {"en": "okey {face}", "tr": "okey {face}"},
    "takeable": {"en": "to take {tile}", "tr": "yandan {tile}"},
    "table_empty": {"en": "Nothing on the table yet.", "tr": "Masada henüz per yok."},
    "meld_value": {"en": "({value})", "tr": "({value})"},
    "legend": {
        "en": "★ okey  ◆ false joker (plays as {face})  _ playable  ! costs +101 to discard",
        "tr": "★ okey  ◆ sahte okey ({face} yerine)  _ işlek taş  ! atılırsa +101 ceza",
    },
    "spectator_rack": {
        "en": "Watching: no rack is shown to spectators.",
        "tr": "İzliyorsun: izleyicilere ıstaka gösterilmez.",
    },
    # The selection.
    "selection_none": {
        "en": "Space selects tiles; g closes a group; o opens, m melds with the groups.",
        "tr": "Boşluk taş seçer; g grubu kapatır; o ile açarsın, m ile per koyarsın.",
    },
    "group_invalid": {"en": "{tiles}: {reason}", "tr": "{tiles}: {reason}"},
    "kind_run": {"en": "run", "tr": "seri"},
    "kind_set": {"en": "set", "tr": "per"},
    "kind_pair": {"en": "pair", "tr": "çift"},
    "okey_stands_for": {"en": "{okey} as {face}", "tr": "{okey} = {face}"},
    "opening_total": {
        "en": "opening {value} of {minimum}",
        "tr": "açılış {value} / {minimum}",
    },
    "opening_pairs": {
        "en": "{count} pairs of {minimum}",
        "tr": "{count} çift / {minimum}",
    },
    "opening_ok": {"en": "opens", "tr": "açar"},
    "melds_total": {"en": "melds worth {value}", "tr": "perlerin değeri {value}"},
    "best_opening": {
        "en": "Best opening: {value} points in {count} melds (selected; o opens).",
        "tr": "En iyi açılış: {count} perde {value} puan (seçildi; o ile aç).",
    },
    "best_pairs": {
        "en": "Best opening: {count} pairs (selected; o opens).",
        "tr": "En iyi açılış: {count} çift (seçildi; o ile aç).",
    },
    "no_opening": {
        "en": "No opening yet: at best {value} points or {pairs} pairs.",
        "tr": "Henüz açamazsın: en çok {value} puan ya da {pairs} çift.",
    },
    # What the client itself refuses before asking the table.
    "need_one_tile": {
        "en": "Put the cursor on one tile (or select exactly one).",
        "tr": "İmleci bir taşın üstüne getir (ya da tek bir taş seç).",
    },
    "need_groups": {
        "en": "Select tiles first (g closes each group).",
        "tr": "Önce taş seç (her grubu g ile kapat).",
    },
    "need_okey_meld": {
        "en": "No meld on the table holds an okey.",
        "tr": "Masada okey içeren bir per yok.",
    },
    "no_melds": {
        "en": "There is nothing on the table to lay off on.",
        "tr": "Masada işlenecek per yok.",
    },
    "spectator_no_moves": {
        "en": "Spectators cannot move.",
        "tr": "İzleyiciler hamle yapamaz.",
    },
    "sending": {"en": "Sending…", "tr": "Gönderiliyor…"},
    # Asking first.
    "confirm_costly": {
        "en": "Discarding {tile} costs +101. Discard it anyway?",
        "tr": "{tile} atarsan +101 ceza yazılır. Yine de atıyor musun?",
    },
    "confirm_yes": {"en": "Discard (y)", "tr": "At (e)"},
    "confirm_no": {"en": "Keep it (n)", "tr": "Vazgeç (h)"},
    "pick_meld": {
        "en": "Which meld? (↑↓ and Enter, Esc to cancel)",
        "tr": "Hangi per? (↑↓ ve Enter, vazgeçmek için Esc)",
    },
    "no_fit": {
        "en": "{tiles}: no meld on the table takes it.",
        "tr": "{tiles}: masadaki hiçbir per almıyor.",
    },
    "confirm_leave": {
        "en": "Leave the table? A bot will play your seat until you come back (okey101 play).",
        "tr": "Masadan kalkıyor musun? Sen dönene kadar yerine bot oynar (okey101 play).",
    },
    "leave_yes": {"en": "Leave (y)", "tr": "Kalk (e)"},
    "leave_no": {"en": "Stay (n)", "tr": "Kal (h)"},
    "end_low": {"en": "at the low end", "tr": "alt uca"},
    "end_high": {"en": "at the high end", "tr": "üst uca"},
    # A rejection, with the server's sentence.
    "rejected": {"en": "Not allowed: {message}", "tr": "Olmaz: {message}"},
    "stale": {
        "en": "The table moved on before your move arrived; look again and decide.",
        "tr": "Hamlen ulaşmadan masa değişti; tekrar bakıp karar ver.",
    },
    "unavailable": {
        "en": "The table cannot be reached ({reason}); try again.",
        "tr": "Masaya ulaşılamıyor ({reason}); tekrar dene.",
    },
    # Events, as the log shows them.
    "ev_match_started": {"en": "The match has started.", "tr": "Maç başladı."},
    "ev_hand_dealt": {
        "en": "Hand {number} dealt by {name}; indicator {tile}.",
        "tr": "{number}. eli {name} dağıttı; gösterge {tile}.",
    },
    "ev_hand_dealt_own": {
        "en": "You dealt hand {number}; indicator {tile}.",
        "tr": "{number}. eli sen dağıttın; gösterge {tile}.",
    },
    "ev_turn_timed_out": {"en": "{name} ran out of time.", "tr": "{name} için süre doldu."},
    "ev_turn_timed_out_own": {"en": "Your time ran out.", "tr": "Süren doldu."},
    "ev_drew": {"en": "{name} drew from the stock.", "tr": "{name} ortadan çekti."},
    "ev_drew_own": {"en": "You drew {tile}.", "tr": "Ortadan {tile} çektin."},
    "ev_took": {"en": "{name} took {tile}.", "tr": "{name} yandan {tile} aldı."},
    "ev_took_own": {"en": "You took {tile}.", "tr": "Yandan {tile} aldın."},
    "ev_gave_back_own": {"en": "You gave {tile} back.", "tr": "{tile} taşını geri verdin."},
    "ev_penalty_own": {
        "en": "You: +{points} penalty ({reason}).",
        "tr": "Sana +{points} ceza yazıldı ({reason}).",
    },
    "ev_opened_own": {"en": "You opened ({points}): {tiles}", "tr": "Açtın ({points}): {tiles}"},
    "ev_melded_own": {"en": "You laid down {tiles}", "tr": "Per koydun: {tiles}"},
    "ev_laid_off_own": {
        "en": "You laid {tiles} off on #{index}.",
        "tr": "#{index} perine {tiles} işledin.",
    },
    "ev_took_okey_own": {
        "en": "You took the okey back from #{index}.",
        "tr": "#{index} perinden okeyi geri aldın.",
    },
    "ev_showed_indicator_own": {
        "en": "You showed the indicator ({points}).",
        "tr": "Göstergeyi gösterdin ({points}).",
    },
    "ev_discarded_own": {"en": "You discarded {tile}.", "tr": "{tile} attın."},
    "ev_gave_back": {"en": "{name} gave {tile} back.", "tr": "{name} {tile} taşını geri verdi."},
    "ev_penalty": {
        "en": "{name}: +{points} penalty ({reason}).",
        "tr": "{name}: +{points} ceza ({reason}).",
    },
    "ev_opened": {
        "en": "{name} opened ({points}): {tiles}",
        "tr": "{name} açtı ({points}): {tiles}",
    },
    "ev_melded": {"en": "{name} laid down {tiles}", "tr": "{name} per koydu: {tiles}"},
    "ev_laid_off": {
        "en": "{name} laid {tiles} off on #{index}.",
        "tr": "{name} #{index} perine {tiles} işledi.",
    },
    "ev_took_okey": {
        "en": "{name} took the okey back from #{index}.",
        "tr": "{name} #{index} perinden okeyi geri aldı.",
    },
    "ev_showed_indicator": {
        "en": "{name} showed the indicator ({points}).",
        "tr": "{name} göstergeyi gösterdi ({points}).",
    },
    "ev_discarded": {"en": "{name} discarded {tile}.", "tr": "{name} {tile} attı."},
    "ev_stock_out": {"en": "The stock is empty.", "tr": "Ortada taş kalmadı."},
    "ev_declined_own": {
        "en": "You declined the last discard.",
        "tr": "Son atılan taşı almadın.",
    },
    "ev_declined": {
        "en": "{name} declined the last discard.",
        "tr": "{name} son atılan taşı almadı.",
    },
    "ev_hand_ended": {"en": "Hand {number} is over.", "tr": "{number}. el bitti."},
    "ev_match_ended": {"en": "The match is over.", "tr": "Maç bitti."},
    "ev_seat_taken": {"en": "{name} sat at seat {seat}.", "tr": "{name} {seat}. koltuğa oturdu."},
    "ev_seat_taken_own": {"en": "You sat at seat {seat}.", "tr": "{seat}. koltuğa oturdun."},
    "ev_seat_left_own": {
        "en": "You left; a bot plays your seat.",
        "tr": "Masadan ayrıldın; yerine bot oynuyor.",
    },
    "ev_seat_away_own": {
        "en": "You are away; a bot plays your seat.",
        "tr": "Uzaktasın; yerine bot oynuyor.",
    },
    "ev_seat_back_own": {"en": "You are back.", "tr": "Geri döndün."},
    "ev_seat_left": {
        "en": "{name} left; a bot plays on.",
        "tr": "{name} ayrıldı; yerine bot oynuyor.",
    },
    "ev_seat_away": {
        "en": "{name} is away; a bot plays on.",
        "tr": "{name} uzakta; yerine bot oynuyor.",
    },
    "ev_seat_back": {"en": "{name} is back.", "tr": "{name} geri döndü."},
    "ev_table_closed": {"en": "The table was closed.", "tr": "Masa kapatıldı."},
    "reason_okey": {"en": "discarded the okey", "tr": "okey atma"},
    "reason_playable": {"en": "discarded a playable tile", "tr": "işlek taş atma"},
    "reason_gave_back": {"en": "gave a tile back", "tr": "taşı geri verme"},
    "reason_before": {"en": "charged before", "tr": "önceden yazılmış"},
    # The score sheet and the result.
    "sheet_title": {
        "en": "Score sheet after hand {number}",
        "tr": "{number}. elden sonra puan çizelgesi",
    },
    "sheet_title_now": {"en": "Score sheet", "tr": "Puan çizelgesi"},
    "sheet_hand": {"en": "Hand", "tr": "El"},
    "sheet_total": {"en": "Total", "tr": "Toplam"},
    "sheet_finished_by": {"en": "finished by {name}", "tr": "{name} elini bitirdi"},
    "sheet_finished_by_own": {"en": "you finished", "tr": "sen elini bitirdin"},
    "sheet_stock_out": {"en": "stock ran out", "tr": "ortada taş kalmadı"},
    "sheet_void": {"en": "void hand", "tr": "geçersiz el"},
    "sheet_doubled": {"en": "×{multiplier}", "tr": "×{multiplier}"},
    "sheet_with_okey": {"en": "with the okey", "tr": "okeyle bitirme"},
    "sheet_after_pairs": {"en": "after pairs", "tr": "çiftle bitirme"},
    "sheet_one_go": {"en": "in one go", "tr": "elden bitirme"},
    "line_finished": {"en": "finished {points}", "tr": "bitiren {points}"},
    "line_never_opened": {"en": "never opened {points}", "tr": "hiç açmadan {points}"},
    "line_rack_sum": {"en": "rack ({count} tiles) {points}", "tr": "ıstaka ({count} taş) {points}"},
    "line_okey_in_hand": {"en": "okey ×{count} {points}", "tr": "elde okey ×{count} {points}"},
    "line_doubled": {"en": "×2 ({why}) {points}", "tr": "×2 ({why}) {points}"},
    "line_opened_with_pairs": {"en": "opened with pairs", "tr": "çiftle açılmış"},
    "line_capped": {"en": "capped {points}", "tr": "üst sınır {points}"},
    "line_indicator": {"en": "indicator shown {points}", "tr": "gösterge gösterildi {points}"},
    "line_penalty": {"en": "penalty ({why}) {points}", "tr": "ceza ({why}) {points}"},
    "line_sum": {"en": "{lines} = {points}", "tr": "{lines} = {points}"},
    "reveal_empty_rack": {"en": "no tiles left", "tr": "taş kalmadı"},
    "reveal_totals": {"en": "Match: {totals} · {target}", "tr": "Maç: {totals} · {target}"},
    "reveal_hands": {"en": "hand {played}", "tr": "{played}. el"},
    "sheet_from_table": {
        "en": "(from the table; the scoring service has not answered yet)",
        "tr": "(masadan; puan servisi henüz yanıt vermedi)",
    },
    "sheet_continue": {"en": "Enter: back to the table", "tr": "Enter: masaya dön"},
    "result_title": {"en": "Match over", "tr": "Maç bitti"},
    "result_winner": {"en": "Winner: {names}", "tr": "Kazanan: {names}"},
    "result_quit": {"en": "q: quit", "tr": "q: çık"},
    # Key bindings, as the footer shows them.
    "key_draw": {"en": "draw", "tr": "çek"},
    "key_take": {"en": "take", "tr": "al"},
    "key_select": {"en": "select", "tr": "seç"},
    "key_group": {"en": "group", "tr": "grupla"},
    "key_open": {"en": "open", "tr": "aç"},
    "key_meld": {"en": "meld", "tr": "per koy"},
    "key_lay_off": {"en": "lay off", "tr": "işle"},
    "key_take_okey": {"en": "okey back", "tr": "okeyi al"},
    "key_discard": {"en": "discard", "tr": "at"},
    "key_best": {"en": "best opening", "tr": "en iyi açılış"},
    "key_clear": {"en": "clear", "tr": "temizle"},
    "key_sort": {"en": "sort", "tr": "diz"},
    "key_give_back": {"en": "give back", "tr": "geri ver"},
    "key_show_indicator": {"en": "show indicator", "tr": "göstergeyi göster"},
    "key_sheet": {"en": "score sheet", "tr": "puanlar"},
    "key_wallet": {"en": "chips", "tr": "çipler"},
    "key_quit": {"en": "quit", "tr": "çık"},
    "key_space": {"en": "space", "tr": "boşluk"},
    "key_gap": {"en": "gap", "tr": "ara aç"},
    # The simulate command.
    "sim_match": {
        "en": "Match {number} of {count} at table {table} ({rules})",
        "tr": "{count} maçtan {number}. maç, {table} masasında ({rules})",
    },
    "sim_winner": {"en": "winner: {names}", "tr": "kazanan: {names}"},
}


class _Lenient(dict[str, object]):
    """Leaves a missing parameter visible rather than failing to show a sentence."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


class Strings:
    """The catalogue in one language: ``strings("stock", count=20)``."""

    def __init__(self, language: Language = "en") -> None:
        self.language: Language = language

    def __call__(self, key: str, /, **params: object) -> str:
        template = CATALOGUE[key][self.language]
        # The values are often the server's (names, its sentences, ids): drawn safe here.
        params = {
            name: shown(value) if isinstance(value, str) else value
            for name, value in params.items()
        }
        text = template.format_map(_Lenient(params))
        if template.startswith("{tile}") and template.rstrip().endswith((".", "?", "!")):
            return sentence_case(text, self.language)  # "Kırmızı 7 attın."
        return text

    @property
    def locale(self) -> str:
        """The BCP 47 tag sent as every request's ``locale`` (the server answers in it)."""
        return "tr-TR" if self.language == "tr" else "en-GB"


def parameters(template: str) -> frozenset[str]:
    """The names a template fills in (``{count} tiles`` -> ``{"count"}``)."""
    return frozenset(
        name for _text, name, _spec, _conv in string.Formatter().parse(template) if name
    )


def language_of(text: str) -> Language:
    """``tr`` or ``en`` from a command-line value (anything but Turkish is English)."""
    return "tr" if text.strip().lower().startswith("tr") else "en"
