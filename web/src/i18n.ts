// Every sentence the page shows, in English and Turkish (informal "sen", the words of
// docs/glossary.md and the terminal client's services/okey101/client/i18n.py). The rules' and
// services' sentences (a refused move) come from the server in the chosen language.
export type Language = "en" | "tr";

const STORE = "okey101.language";

const CATALOGUE: Record<string, Record<Language, string>> = {
  title: { en: "Okey 101", tr: "Okey 101" },
  language: { en: "Language", tr: "Dil" },
  // Logging in and finding a table.
  your_name: { en: "Your name", tr: "Adın" },
  login: { en: "Play as a guest", tr: "Misafir olarak oyna" },
  logging_in: { en: "Logging in…", tr: "Giriş yapılıyor…" },
  logged_in: { en: "Logged in as {name}.", tr: "{name} olarak giriş yaptın." },
  change_name: { en: "Change name", tr: "Adını değiştir" },
  quick_match: { en: "Quick match", tr: "Hızlı oyun" },
  host_table: { en: "Private table with bots", tr: "Botlarla özel masa" },
  rules_preset: { en: "Rules", tr: "Kurallar" },
  preset_oyna: { en: "Oyna (to 1,000)", tr: "Oyna (1.000'e)" },
  preset_boombala: { en: "Boombala (fixed hands)", tr: "Boombala (el sayılı)" },
  preset_north_sultan: { en: "North Sultan (11 hands)", tr: "North Sultan (11 el)" },
  hands: { en: "Hands", tr: "El sayısı" },
  bot_level: { en: "Bots", tr: "Botlar" },
  level_easy: { en: "easy", tr: "kolay" },
  level_normal: { en: "normal", tr: "orta" },
  level_hard: { en: "hard", tr: "zor" },
  host: { en: "Host the table", tr: "Masayı kur" },
  public_table: { en: "Public: anyone may watch", tr: "Herkese açık: herkes izleyebilir" },
  join: { en: "Find a table", tr: "Masa bul" },
  queue_waiting: {
    en: "Looking for a table ({players} waiting); bots fill the empty seats at {time}.",
    tr: "Masa aranıyor ({players} kişi bekliyor); boş koltuklara {time} itibarıyla bot oturacak.",
  },
  queue_cancelled: { en: "The quick-match ticket was cancelled.", tr: "Hızlı oyun bileti iptal edildi." },
  // Chips: the wallet, the stake, the pot and the payout (docs/chips.md).
  wallet_chips: { en: "Your chips", tr: "Çiplerin" },
  wallet_loading: { en: "Counting your chips…", tr: "Çiplerin sayılıyor…" },
  balance: { en: "Balance: {chips} chips", tr: "Bakiye: {chips} çip" },
  held: { en: "In play: {chips} chips (your stakes at tables)", tr: "Masada: {chips} çip (masalardaki bahislerin)" },
  claim_daily: { en: "Claim your {chips} daily chips", tr: "Günlük {chips} çipini al" },
  daily_next: { en: "Next daily chips ({chips}): {time}", tr: "Sonraki günlük çip ({chips}): {time}" },
  daily_claimed: { en: "+{chips} daily chips: your balance is {balance}.", tr: "+{chips} günlük çip aldın: bakiyen {balance}." },
  wallet_history: { en: "Wallet history", tr: "Çip geçmişi" },
  wallet_empty: { en: "No chips have moved yet.", tr: "Henüz çip hareketi yok." },
  wallet_more: { en: "Older entries", tr: "Daha eski hareketler" },
  back_to_lobby: { en: "Back to the lobby", tr: "Lobiye dön" },
  col_when: { en: "When", tr: "Tarih" },
  col_what: { en: "What", tr: "Hareket" },
  col_amount: { en: "Chips", tr: "Çip" },
  col_after: { en: "Balance", tr: "Bakiye" },
  col_for: { en: "Table or tournament", tr: "Masa ya da turnuva" },
  entry_grant: { en: "Starting chips", tr: "Başlangıç çipi" },
  entry_daily_grant: { en: "Daily chips", tr: "Günlük çip" },
  entry_stake: { en: "Stake", tr: "Bahis" },
  entry_payout: { en: "Winnings", tr: "Kazanç" },
  entry_fee: { en: "Table fee", tr: "Masa ücreti" },
  entry_refund: { en: "Refund", tr: "İade" },
  entry_prize: { en: "Tournament prize", tr: "Turnuva ödülü" },
  entry_entry_fee: { en: "Entry fee", tr: "Katılım ücreti" },
  entry_adjustment: { en: "Adjustment by the operator", tr: "Yönetici düzeltmesi" },
  entry_other: { en: "Other", tr: "Diğer" },
  entry_table: { en: "table {id}", tr: "{id} masası" },
  entry_tournament: { en: "tournament {id}", tr: "{id} turnuvası" },
  stake: { en: "Stake", tr: "Bahis" },
  stake_none: { en: "No stake", tr: "Bahissiz" },
  stake_chips: { en: "{chips} chips", tr: "{chips} çip" },
  stake_fee: {
    en: "The winner takes the pot, less a {percent}% table fee.",
    tr: "Potu kazanan alır; pottan %{percent} masa ücreti kesilir.",
  },
  table_stake: { en: "Stake {chips}", tr: "Bahis {chips}" },
  table_pot: { en: "Pot {chips}", tr: "Pot {chips}" },
  payout_waiting: { en: "Paying out the pot…", tr: "Pot dağıtılıyor…" },
  payout_paid: { en: "Your winnings: +{chips} chips (stake {stake}).", tr: "Kazancın: +{chips} çip (bahis {stake})." },
  payout_none: { en: "No winnings this time: your stake of {stake} chips went to the pot.", tr: "Bu sefer kazanç yok: {stake} çiplik bahsin pota gitti." },
  payout_late: {
    en: "Your winnings are not in your wallet yet; the wallet history will show them.",
    tr: "Kazancın henüz hesabına geçmedi; çip geçmişinde görünecek.",
  },
  cancel: { en: "Cancel", tr: "Vazgeç" },
  seated: { en: "Seated at table {table}, seat {seat}.", tr: "{table} masasında {seat}. koltuğa oturdun." },
  back_at_table: { en: "Back at table {table}.", tr: "{table} masasına döndün." },
  waiting_for_deal: { en: "Waiting for the deal…", tr: "Dağıtım bekleniyor…" },
  reconnecting: { en: "Connection lost; reconnecting…", tr: "Bağlantı koptu; yeniden bağlanılıyor…" },
  table_closed: { en: "The table was closed.", tr: "Masa kapatıldı." },
  invite: { en: "Invite code {code}", tr: "Davet kodu {code}" },
  watch_link: { en: "Spectator page", tr: "İzleyici sayfası" },
  // Regions of the table screen.
  seats: { en: "Seats", tr: "Koltuklar" },
  moves: { en: "Moves", tr: "Hamleler" },
  log: { en: "What happened", tr: "Olanlar" },
  // Seats.
  seat_label: { en: "Seat {seat}", tr: "{seat}. koltuk" },
  you: { en: "you", tr: "sen" },
  bot: { en: "bot", tr: "bot" },
  empty_seat: { en: "empty", tr: "boş" },
  away: { en: "away", tr: "uzakta" },
  tile_count: { en: "{count} tiles", tr: "{count} taş" },
  not_opened: { en: "not opened", tr: "açılmamış" },
  opened_runs: { en: "opened with runs", tr: "seriyle açık" },
  opened_pairs: { en: "opened with pairs", tr: "çiftle açık" },
  penalty_points: { en: "penalty +{points}", tr: "ceza +{points}" },
  discards_of: { en: "Discards of {name}", tr: "{name} attıkları" },
  no_discard: { en: "no discard", tr: "atılan yok" },
  match_total: { en: "total {points}", tr: "toplam {points}" },
  dealer_mark: { en: "dealer", tr: "dağıtan" },
  // The state line.
  turn_you: { en: "Your turn: {phase}", tr: "Sıra sende: {phase}" },
  turn_other: { en: "{name} to move: {phase}", tr: "Sıra: {name} · {phase}" },
  phase_first: { en: "play and discard", tr: "aç ya da at" },
  phase_draw: { en: "draw or take", tr: "çek ya da al" },
  phase_play: { en: "play, then discard", tr: "oyna, sonra at" },
  phase_ended: { en: "the hand is over", tr: "el bitti" },
  seconds_left: { en: "{seconds} s", tr: "{seconds} sn" },
  timer: { en: "Time left", tr: "Kalan süre" },
  stock: { en: "stock {count}", tr: "ortada {count}" },
  indicator: { en: "indicator", tr: "gösterge" },
  okey_is: { en: "okey {face}", tr: "okey {face}" },
  hand_of: { en: "hand {hand}", tr: "{hand}. el" },
  table_empty: { en: "Nothing on the table yet.", tr: "Masada henüz per yok." },
  melds: { en: "Melds on the table", tr: "Masadaki perler" },
  meld_of: { en: "#{index} of {name}", tr: "#{index} · {name}" },
  okey_stands_for: { en: "{okey} as {face}", tr: "{okey} = {face}" },
  rack: { en: "Your rack", tr: "Istakan" },
  spectator_rack: { en: "Watching: no rack is shown to spectators.", tr: "İzliyorsun: izleyicilere ıstaka gösterilmez." },
  // Moves.
  draw: { en: "Draw", tr: "Çek" },
  draw_label: { en: "Draw from the stock", tr: "Ortadan çek" },
  take: { en: "Take {tile}", tr: "Yandan al: {tile}" },
  take_label: { en: "Take the left discard", tr: "Yandan al" },
  discard: { en: "Discard", tr: "At" },
  discard_label: { en: "Discard the selected tile", tr: "Seçili taşı at" },
  open: { en: "Open", tr: "Aç" },
  meld: { en: "Meld", tr: "Per koy" },
  group: { en: "Group", tr: "Grupla" },
  clear: { en: "Clear", tr: "Temizle" },
  best: { en: "Best opening", tr: "En iyi açılış" },
  lay_off: { en: "Lay off", tr: "İşle" },
  take_okey: { en: "Okey back", tr: "Okeyi al" },
  give_back: { en: "Give back", tr: "Geri ver" },
  show_indicator: { en: "Show indicator", tr: "Göstergeyi göster" },
  sort_runs: { en: "Sort by runs", tr: "Seri diz" },
  sort_sets: { en: "Sort by sets", tr: "Sayıya göre diz" },
  gap: { en: "Gap", tr: "Ara aç" },
  move_left: { en: "Move left", tr: "Sola al" },
  move_right: { en: "Move right", tr: "Sağa al" },
  sending: { en: "Sending…", tr: "Gönderiliyor…" },
  selection_none: {
    en: "Click tiles to select them; Group closes a group; Open or Meld lays them down. Keys: c draw, a take, g group, b best, o open, m meld, l lay off, k okey back, x discard, Esc clear.",
    tr: "Taşlara tıklayıp seç; Grupla grubu kapatır; Aç ya da Per koy ile masaya indir. Tuşlar: c çek, a al, g grupla, b en iyi, o aç, m per koy, l işle, k okeyi al, x at, Esc temizle.",
  },
  selected: { en: "Selected: {tiles}", tr: "Seçili: {tiles}" },
  groups: { en: "Groups: {groups}", tr: "Gruplar: {groups}" },
  opening_total: { en: "opening {value} of {minimum}", tr: "açılış {value} / {minimum}" },
  opening_pairs: { en: "{count} pairs of {minimum}", tr: "{count} çift / {minimum}" },
  opening_ok: { en: "opens", tr: "açar" },
  best_opening: {
    en: "Best opening: {value} of {minimum} points in {count} melds (selected; Open opens).",
    tr: "En iyi açılış: {count} perde {value} / {minimum} puan (seçildi; Aç ile aç).",
  },
  best_pairs: {
    en: "Best opening: {count} of {minimum} pairs (selected; Open opens).",
    tr: "En iyi açılış: {count} / {minimum} çift (seçildi; Aç ile aç).",
  },
  no_opening: {
    en: "No opening yet: at best {value} of {minimum} points or {pairs} of {min_pairs} pairs.",
    tr: "Henüz açamazsın: en çok {value} / {minimum} puan ya da {pairs} / {min_pairs} çift.",
  },
  need_one_tile: { en: "Select exactly one tile.", tr: "Tek bir taş seç." },
  need_groups: { en: "Select tiles first (Group closes each group).", tr: "Önce taş seç (her grubu Grupla ile kapat)." },
  need_okey_meld: { en: "No meld on the table holds an okey you can take.", tr: "Masada alabileceğin okey yok." },
  no_fit: { en: "{tiles}: no meld on the table takes it.", tr: "{tiles}: masadaki hiçbir per almıyor." },
  lay_off_on: { en: "Lay {tile} off on #{index} {end}", tr: "{tile} taşını #{index} perine işle {end}" },
  end_low: { en: "at the low end", tr: "alt uca" },
  end_high: { en: "at the high end", tr: "üst uca" },
  playable_hint: { en: "playable", tr: "işlek" },
  costly_hint: { en: "costs +101 to discard", tr: "atılırsa +101 ceza" },
  confirm_costly: { en: "Discarding {tile} costs +101. Discard it anyway?", tr: "{tile} atarsan +101 ceza yazılır. Yine de atıyor musun?" },
  confirm_yes: { en: "Discard", tr: "At" },
  confirm_no: { en: "Keep it", tr: "Vazgeç" },
  rejected: { en: "Not allowed: {message}", tr: "Olmaz: {message}" },
  stale: {
    en: "The table moved on before your move arrived; look again and decide.",
    tr: "Hamlen ulaşmadan masa değişti; tekrar bakıp karar ver.",
  },
  // Events.
  ev_drew_own: { en: "You drew {tile}.", tr: "Ortadan {tile} çektin." },
  ev_drew: { en: "{name} drew from the stock.", tr: "{name} ortadan çekti." },
  ev_took_own: { en: "You took {tile}.", tr: "Yandan {tile} aldın." },
  ev_took: { en: "{name} took {tile}.", tr: "{name} yandan {tile} aldı." },
  ev_discarded_own: { en: "You discarded {tile}.", tr: "{tile} attın." },
  ev_discarded: { en: "{name} discarded {tile}.", tr: "{name} {tile} attı." },
  ev_opened_own: { en: "You opened ({points}).", tr: "Açtın ({points})." },
  ev_opened: { en: "{name} opened ({points}).", tr: "{name} açtı ({points})." },
  ev_hand_ended: { en: "Hand {number} is over.", tr: "{number}. el bitti." },
  ev_match_ended: { en: "The match is over.", tr: "Maç bitti." },
  // The reveal, the score sheet and the result.
  reveal_title: { en: "Hand {number} is over", tr: "{number}. el bitti" },
  finished_by: { en: "finished by {name}", tr: "{name} elini bitirdi" },
  finished_by_own: { en: "you finished", tr: "sen elini bitirdin" },
  stock_out: { en: "stock ran out", tr: "ortada taş kalmadı" },
  void_hand: { en: "void hand", tr: "geçersiz el" },
  reveal_empty_rack: { en: "no tiles left", tr: "taş kalmadı" },
  line_finished: { en: "finished {points}", tr: "bitiren {points}" },
  line_never_opened: { en: "never opened {points}", tr: "hiç açmadan {points}" },
  line_rack_sum: { en: "rack ({count} tiles) {points}", tr: "ıstaka ({count} taş) {points}" },
  line_okey_in_hand: { en: "okey ×{count} {points}", tr: "elde okey ×{count} {points}" },
  line_doubled: { en: "×2 ({why}) {points}", tr: "×2 ({why}) {points}" },
  line_capped: { en: "capped {points}", tr: "üst sınır {points}" },
  line_indicator: { en: "indicator shown {points}", tr: "gösterge gösterildi {points}" },
  line_penalty: { en: "penalty ({why}) {points}", tr: "ceza ({why}) {points}" },
  why_okey_finish: { en: "with the okey", tr: "okeyle bitirme" },
  why_pairs_finish: { en: "after pairs", tr: "çiftle bitirme" },
  why_one_go: { en: "in one go", tr: "elden bitirme" },
  why_opened_pairs: { en: "opened with pairs", tr: "çiftle açılmış" },
  reason_okey: { en: "discarded the okey", tr: "okey atma" },
  reason_playable: { en: "discarded a playable tile", tr: "işlek taş atma" },
  reason_gave_back: { en: "gave a tile back", tr: "taşı geri verme" },
  reason_before: { en: "charged before", tr: "önceden yazılmış" },
  points: { en: "{points} points", tr: "{points} puan" },
  sheet_title: { en: "Score sheet", tr: "Puan çizelgesi" },
  sheet_hand: { en: "Hand", tr: "El" },
  sheet_total: { en: "Total", tr: "Toplam" },
  continue: { en: "Back to the table", tr: "Masaya dön" },
  result_title: { en: "Match over", tr: "Maç bitti" },
  result_winner: { en: "Winner: {names}", tr: "Kazanan: {names}" },
  new_match: { en: "New match", tr: "Yeni maç" },
  watching: { en: "Watching table {table}", tr: "{table} masası izleniyor" },
};

function detect(): Language {
  const kept = localStorage.getItem(STORE);
  if (kept === "en" || kept === "tr") return kept;
  return (navigator.languages ?? [navigator.language]).some((tag) => tag.toLowerCase().startsWith("tr"))
    ? "tr"
    : "en";
}

let current: Language = detect();
const listeners: Array<() => void> = [];

export function language(): Language {
  return current;
}

/** The BCP 47 tag sent as Accept-Language (the server answers in it). */
export function locale(): string {
  return current === "tr" ? "tr-TR" : "en-GB";
}

export function setLanguage(next: Language): void {
  current = next;
  localStorage.setItem(STORE, next);
  document.documentElement.lang = next;
  for (const listener of listeners) listener();
}

export function onLanguageChange(listener: () => void): void {
  listeners.push(listener);
}

/** ``t("stock", { count: 20 })``: a missing parameter stays visible as {name}. */
export function t(key: string, params: Record<string, string | number> = {}): string {
  const template = CATALOGUE[key]?.[current] ?? key;
  return template.replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in params ? String(params[name]) : whole,
  );
}

/** Turkish sentence case ("kırmızı 7 attın." -> "Kırmızı 7 attın."; i -> İ). */
export function sentenceCase(text: string): string {
  if (!text) return text;
  return text[0].toLocaleUpperCase(current === "tr" ? "tr-TR" : "en-GB") + text.slice(1);
}
