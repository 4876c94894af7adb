//! A query's quoted phrases and `-` exclusions over real HTTP, in every mode and across a
//! collection's segments: each result holds every phrase and no excluded word, the documents
//! holding a phrase all come back, facets count only what the search could return, and
//! `"query_syntax": "plain"` reads the same characters as text. A `word*` prefix finds, in
//! the keyword lane, the words it begins in every segment and collection searched, and a
//! `word~` the words a typing error or two from it.

use serde_json::{json, Value};

use crate::http_common::{marked_words, options, ranked_files, result_files as files, TestServer};

/// Six notes on harbours, uploaded two at a time so the collection has three segments.
const NOTES: [(&str, &str); 6] = [
    (
        "authority.txt",
        "The harbour authority raised the mooring fees for every boat in the inner basin this spring.",
    ),
    (
        "fees.txt",
        "Fees at the harbour went up; the authority said the basin needed new pontoons and lights.",
    ),
    (
        "storm.txt",
        "A winter storm closed the harbour for three days and the authority moved the ferries inland.",
    ),
    (
        "ferries.txt",
        "The harbour ferries run every hour in summer; storms in autumn cut the timetable to four a day.",
    ),
    (
        "tokyo.txt",
        "東京都の港湾局は、冬の嵐のあと港のフェリーを三日間止めた。",
    ),
    ("kyoto.txt", "東京と京都を結ぶ列車は、港の近くの駅にも止まる。"),
];

/// `results` name every file of `present` and none of `absent`.
fn holds(results: &Value, present: &[&str], absent: &[&str]) {
    let found = files(results);
    assert!(
        present.iter().all(|f| found.iter().any(|n| n == f)) && !absent.iter().any(|f| found.iter().any(|n| n == f)),
        "{found:?} should hold {present:?} and none of {absent:?}: {results}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quoted_phrases_and_excluded_words_hold_in_every_mode() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    let (status, created) = server.post("/v1/collections", json!({"name": "notes"})).await;
    assert_eq!(status, 201, "{created}");
    for pair in NOTES.chunks(2) {
        server.upload_texts_completed("notes", pair).await;
    }
    let api = &server.api;
    let search = move |body: Value| async move { api.post("/v1/collections/notes/search", body).await };
    for mode in ["auto", "vector", "keyword", "hybrid"] {
        // Without syntax every harbour note can come back; a phrase keeps those holding it.
        let (status, all) = search(json!({"query": "harbour authority", "mode": mode, "top_k": 20})).await;
        assert_eq!(status, 200, "{all}");
        assert!(files(&all).len() >= 4, "{mode}: {all}");
        let (_, phrase) = search(json!({"query": "\"harbour authority\" fees", "mode": mode, "top_k": 20})).await;
        assert_eq!(files(&phrase), ["authority.txt"], "{mode}: {phrase}");
        assert_eq!(phrase["query"], "\"harbour authority\" fees");
        // An excluded word takes out its forms (storm, storms), an excluded phrase its rows.
        // (The vector lane ranks every row it may: the Japanese notes come back too.)
        let (_, excluded) = search(json!({"query": "harbour ferries -storm", "mode": mode, "top_k": 20})).await;
        holds(&excluded, &["authority.txt", "fees.txt"], &["storm.txt", "ferries.txt"]);
        let (_, excluded) =
            search(json!({"query": "harbour -\"harbour authority\" -\"winter storm\"", "mode": mode, "top_k": 20}))
                .await;
        holds(&excluded, &["fees.txt", "ferries.txt"], &["authority.txt", "storm.txt"]);
        // A CJK phrase is its characters in a row: 東京都, not 東京 and 京都 apart.
        let (_, cjk) = search(json!({"query": "\"東京都\"", "mode": mode, "top_k": 20})).await;
        assert_eq!(files(&cjk), ["tokyo.txt"], "{mode}: {cjk}");
        // Plain syntax: the dash and quotes are text, nothing is left out.
        let (_, plain) =
            search(json!({"query": "harbour ferries -storm", "mode": mode, "top_k": 20, "query_syntax": "plain"}))
                .await;
        assert!(files(&plain).contains(&"storm.txt".to_string()), "{mode}: {plain}");
    }
    // Highlights mark the phrase where it stands, as one range, never an excluded word.
    let (_, marked) =
        search(json!({"query": "\"harbour authority\" -ferries", "mode": "keyword", "highlight": true})).await;
    assert_eq!(files(&marked), ["authority.txt"], "{marked}");
    for chunk in marked["chunks"].as_array().unwrap() {
        let content: Vec<char> = chunk["content"].as_str().unwrap().chars().collect();
        let words: Vec<String> = chunk["metadata"]["highlights"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                content[r[0].as_u64().unwrap() as usize..r[1].as_u64().unwrap() as usize]
                    .iter()
                    .collect()
            })
            .collect();
        assert_eq!(words, ["harbour authority"]);
    }
    // Facets count the documents the search could return: those holding the phrase.
    let (_, faceted) =
        search(json!({"query": "\"harbour authority\"", "mode": "vector", "facets": ["file_name"]})).await;
    assert_eq!(faceted["facets"]["file_name"]["documents"], 1, "{faceted}");
    // Refused, naming why: only exclusions, and an unknown syntax.
    let (status, refused) = search(json!({"query": "-storm -\"harbour authority\""})).await;
    assert_eq!(status, 400, "{refused}");
    assert!(refused.to_string().contains("only excluded words"), "{refused}");
    let (status, refused) = search(json!({"query": "harbour", "query_syntax": "lucene"})).await;
    assert_eq!(status, 400, "{refused}");
    assert!(
        refused
            .to_string()
            .contains("query_syntax: unknown variant `lucene`, expected `simple` or `plain`"),
        "{refused}"
    );
    // Several collections searched as one read the syntax alike.
    let (status, together) = server
        .post(
            "/v1/search",
            json!({"query": "harbour -winter -fees", "mode": "keyword"}),
        )
        .await;
    assert_eq!(status, 200, "{together}");
    assert_eq!(files(&together), ["ferries.txt"], "{together}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prefix_or_a_misspelt_word_finds_its_words_in_every_segment_and_collection() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    server.create_collections(&["notes", "garden"]).await;
    server
        .upload_texts_completed(
            "notes",
            &[
                ("hydrogen.txt", "Hydrogen buses refuel at the depot every night."),
                ("pumps.txt", "Hydraulic pumps lift the lock gates at dawn."),
            ],
        )
        .await;
    server
        .upload_texts_completed(
            "notes",
            &[
                ("dams.txt", "Hydroelectric dams feed the grid in spring."),
                ("bakery.txt", "The bakery opens at six with fresh bread."),
                ("hydrangea.txt", "Hydrangeas bloom blue in acid soil."),
            ],
        )
        .await;
    server
        .upload_texts_completed("garden", &[("roses.txt", "Hydrangea and rose beds line the path.")])
        .await;
    let api = &server.api;
    let search = move |body: Value| async move { api.post("/v1/collections/notes/search", body).await };
    // Keyword mode: every note with a word hydr- begins, from both segments; the word as typed alone finds none.
    let (status, found) = search(json!({"query": "hydr*", "mode": "keyword", "top_k": 10, "highlight": true})).await;
    assert_eq!(status, 200, "{found}");
    assert_eq!(
        files(&found),
        ["dams.txt", "hydrangea.txt", "hydrogen.txt", "pumps.txt"],
        "{found}"
    );
    assert_eq!(
        marked_words(&found),
        ["Hydrangeas", "Hydraulic", "Hydroelectric", "Hydrogen"],
        "{found}"
    );
    let (_, typed) = search(json!({"query": "hydr", "mode": "keyword"})).await;
    assert_eq!(files(&typed), Vec::<String>::new(), "{typed}");
    // Beside other words and the rest of the syntax; facets count what it finds.
    let (_, narrowed) = search(json!({"query": "hydr* -lock", "mode": "keyword", "top_k": 10})).await;
    assert_eq!(
        files(&narrowed),
        ["dams.txt", "hydrangea.txt", "hydrogen.txt"],
        "{narrowed}"
    );
    let (_, faceted) = search(json!({"query": "hydro* grid", "mode": "keyword", "facets": ["file_name"]})).await;
    assert_eq!(files(&faceted)[0], "dams.txt", "holds both words: {faceted}");
    assert_eq!(
        faceted["facets"]["file_name"]["documents"], 2,
        "dams and hydrogen: {faceted}"
    );
    // Hybrid and auto: the keyword lane's rows are the notes the prefix finds.
    for mode in ["hybrid", "auto"] {
        let (status, fused) = search(json!({"query": "hydr*", "mode": mode, "top_k": 10})).await;
        assert_eq!(status, 200, "{fused}");
        let mut by_keyword: Vec<String> = fused["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["metadata"]["keyword_rank"].is_u64())
            .map(|c| c["file_name"].as_str().unwrap().to_string())
            .collect();
        by_keyword.sort();
        assert_eq!(
            by_keyword,
            ["dams.txt", "hydrangea.txt", "hydrogen.txt", "pumps.txt"],
            "{mode}: {fused}"
        );
    }
    // Plain syntax reads the star as text.
    let (_, plain) = search(json!({"query": "hydr*", "mode": "keyword", "query_syntax": "plain"})).await;
    assert_eq!(files(&plain), Vec::<String>::new(), "{plain}");
    // A misspelt word finds the words a typing error or two from it; as typed, without typo
    // tolerance (or as `~0`), it finds none.
    let (status, near) =
        search(json!({"query": "hydorgen~ refeul~", "mode": "keyword", "top_k": 10, "highlight": true})).await;
    assert_eq!(status, 200, "{near}");
    assert_eq!(files(&near), ["hydrogen.txt"], "{near}");
    assert_eq!(marked_words(&near), ["Hydrogen", "refuel"], "{near}");
    let (_, typed) = search(json!({"query": "hydorgen refeul", "mode": "keyword", "typo_tolerance": false})).await;
    assert_eq!(files(&typed), Vec::<String>::new(), "{typed}");
    let (_, one) = search(json!({"query": "hydorgen~1", "mode": "keyword"})).await;
    assert_eq!(files(&one), ["hydrogen.txt"], "a swap is one error: {one}");
    let (_, none) = search(json!({"query": "hydorgen~0", "mode": "keyword"})).await;
    assert_eq!(files(&none), Vec::<String>::new(), "{none}");
    for mode in ["hybrid", "auto"] {
        let (_, fused) = search(json!({"query": "hydorgen~", "mode": mode, "top_k": 10})).await;
        let by_keyword: Vec<&str> = fused["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["metadata"]["keyword_rank"].is_u64())
            .map(|c| c["file_name"].as_str().unwrap())
            .collect();
        assert_eq!(by_keyword, ["hydrogen.txt"], "{mode}: {fused}");
    }
    // Several collections searched as one share the completions.
    let (status, together) = server
        .post("/v1/search", json!({"query": "hydrang*", "mode": "keyword"}))
        .await;
    assert_eq!(status, 200, "{together}");
    assert_eq!(files(&together), ["hydrangea.txt", "roses.txt"], "{together}");
    let (_, together) = server
        .post("/v1/search", json!({"query": "hydrnagea~", "mode": "keyword"}))
        .await;
    assert_eq!(files(&together), ["hydrangea.txt", "roses.txt"], "{together}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_groups_common_term_is_not_outranked_by_a_rare_one() {
    let data = tempfile::tempdir().unwrap();
    let notes = [
        ("buses.txt", "Hydrogen powers the buses."),
        ("tanks.txt", "Hydrogen is stored in tanks."),
        ("cells.txt", "Hydrogen fuel cells."),
        (
            "wound.txt",
            "A hydrogel dressing keeps the wound moist while it heals over several long days.",
        ),
        ("river.txt", "The river floods in spring."),
        ("roof.txt", "A tank of water stands on the roof."),
    ];
    let server = TestServer::start_with_texts(data.path(), "notes", &notes).await;
    // hydrogen (three rows) and hydrogel (one) are both near `hydrogne` and both begin
    // `hydrog`: the group counts hydrogel's rows as hydrogen's, so its rarity alone does not
    // put the long hydrogel note first.
    for query in ["hydrogne~", "hydrog*"] {
        let result = server
            .api
            .search_ok(
                "notes",
                json!({"query": query, "mode": "keyword", "typo_tolerance": false}),
            )
            .await;
        let ranked = ranked_files(&result);
        assert_eq!(ranked.len(), 4, "{query}: {result}");
        assert_eq!(ranked[3], "wound.txt", "{query}: {result}");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_near_term_counts_as_much_as_it_is_like_the_word() {
    let data = tempfile::tempdir().unwrap();
    // Alike but for the near term (cord first, so a tie would put it first).
    let notes = [("cord.txt", "The cord was red."), ("card.txt", "The card was red.")];
    let server = TestServer::start_with_texts(data.path(), "notes", &notes).await;
    let body = json!({"query": "cart~2", "mode": "keyword", "typo_tolerance": false});
    let result = server.api.search_ok("notes", body).await;
    assert_eq!(ranked_files(&result), ["card.txt", "cord.txt"], "{result}");
    // card is one error from cart (1 - 1/4), cord two (1 - 2/4): 0.5 / 0.75 of its score.
    let score = |at: usize| result["chunks"][at]["metadata"]["keyword_score"].as_f64().unwrap();
    assert!((score(1) / score(0) - 2.0 / 3.0).abs() < 1e-4, "{result}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_cjk_character_finds_the_runs_holding_it() {
    let data = tempfile::tempdir().unwrap();
    let notes = [
        ("nara.txt", "東大寺は奈良にある古い寺で、大仏がある。"),
        ("kyoto.txt", "京都の駅から寺まで歩いた。"),
        ("cat.txt", "猫が窓のそばで寝ている。"),
        ("alone.txt", "地図の記号（寺）を見る。"),
        ("river.txt", "The river floods in spring."),
    ];
    let server = TestServer::start_with_texts(data.path(), "notes", &notes).await;
    let search = |body: Value| {
        let api = &server.api;
        async move { api.search_ok("notes", body).await }
    };
    // 寺 stands inside runs (大寺, 寺で, 寺ま) in three notes and alone in one: the keyword
    // lane reads the pairs holding it, where a lone 寺 was a term of the one note alone.
    for mode in ["keyword", "auto", "hybrid"] {
        let result = search(json!({"query": "寺", "mode": mode, "typo_tolerance": false})).await;
        holds(&result, &["nara.txt", "kyoto.txt", "alone.txt"], &[]);
        if mode == "keyword" {
            holds(&result, &[], &["cat.txt", "river.txt"]);
        }
    }
    let result = search(json!({"query": "猫", "mode": "keyword"})).await;
    assert_eq!(ranked_files(&result), ["cat.txt"], "{result}");
    // As a phrase and as an exclusion, the same rows.
    let result = search(json!({"query": "\"寺\"", "mode": "auto", "top_k": 20})).await;
    assert_eq!(files(&result), ["alone.txt", "kyoto.txt", "nara.txt"], "{result}");
    let result = search(json!({"query": "京都 -寺", "mode": "keyword"})).await;
    holds(&result, &[], &["kyoto.txt", "nara.txt", "alone.txt"]);
    // Only a query's first 32 lone characters are looked up by their pairs (each a walk of
    // the term dictionary): 寺 after 32 others no note holds finds only where it stands alone.
    let others: Vec<String> = ('一'..)
        .filter(|c| !"東大寺京都".contains(*c))
        .take(32)
        .map(String::from)
        .collect();
    let first = format!("寺 {}", others.join(" "));
    let result = search(json!({"query": first, "mode": "keyword", "typo_tolerance": false, "top_k": 20})).await;
    holds(&result, &["nara.txt", "kyoto.txt", "alone.txt"], &[]);
    let last = format!("{} 寺", others.join(" "));
    let result = search(json!({"query": last, "mode": "keyword", "typo_tolerance": false, "top_k": 20})).await;
    assert_eq!(ranked_files(&result), ["alone.txt"], "{result}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vietnamese_typed_without_marks_finds_its_marked_words() {
    let data = tempfile::tempdir().unwrap();
    let notes = [
        (
            "country.txt",
            "Việt Nam là một quốc gia nằm ở phía đông bán đảo Đông Dương, thuộc khu vực Đông Nam Á.",
        ),
        (
            "letters.txt",
            "Tôi thích viết thư cho bạn bè vào mỗi buổi tối sau khi làm xong việc ở văn phòng.",
        ),
        (
            "market.txt",
            "Mẹ tôi đi chợ mua cá và rau để nấu bữa cơm chiều cho cả gia đình cùng ăn.",
        ),
    ];
    let server = TestServer::start_with_texts(data.path(), "notes", &notes).await;
    let search = |body: Value| {
        let api = &server.api;
        async move { api.search_ok("notes", body).await }
    };
    // Typed with its marks, a word finds only itself: `việt` is not `viết` ("to write").
    let result = search(json!({"query": "Việt", "mode": "keyword"})).await;
    assert_eq!(ranked_files(&result), ["country.txt"], "{result}");
    let result = search(json!({"query": "viết", "mode": "keyword"})).await;
    assert_eq!(ranked_files(&result), ["letters.txt"], "{result}");
    // Typed without them, the words it is written as, marked where they stand, and no "did
    // you mean" for a word the collection holds with its marks.
    let result = search(json!({"query": "viet", "mode": "keyword", "highlight": true, "suggest": true})).await;
    assert_eq!(files(&result), ["country.txt", "letters.txt"], "{result}");
    assert!(result.get("suggestion").is_none(), "{result}");
    assert_eq!(marked_words(&result), ["Việt", "viết"], "{result}");
    let result = search(json!({"query": "gia dinh", "mode": "auto"})).await;
    assert_eq!(ranked_files(&result)[0], "market.txt", "{result}");
    // A prefix finds the marked words it begins.
    let result = search(json!({"query": "vie*", "mode": "keyword"})).await;
    assert_eq!(files(&result), ["country.txt", "letters.txt"], "{result}");
    server.stop().await;
}

/// Thai is read as its words (analyzers from `quarry_multi_v7` on): a word finds the rows holding it,
/// not those holding its letters inside other words, a phrase of two words finds them in a
/// row, and highlights mark whole words.
#[tokio::test]
async fn thai_words_are_searched_and_marked_whole() {
    let data = tempfile::tempdir().unwrap();
    let notes = [
        ("timetable.txt", "ฉันชอบดูตารางเวลารถไฟที่สถานี"),
        ("eyes.txt", "เด็กคนนั้นมีตาสีฟ้าสวยมาก"),
        ("market.txt", "เขาเดินตามแม่ไปตลาดทุกเช้า"),
        ("schedule.txt", "เวลาเปิดร้านอยู่ในตารางด้านล่าง"),
    ];
    let server = TestServer::start_with_texts(data.path(), "notes", &notes).await;
    let search = |body: Value| {
        let api = &server.api;
        async move { api.search_ok("notes", body).await }
    };
    // `ตา` ("eye") is not the `ตา` of `ตาราง` ("table") or `ตาม` ("follow").
    let result = search(json!({"query": "ตา", "mode": "keyword", "highlight": true})).await;
    assert_eq!(ranked_files(&result), ["eyes.txt"], "{result}");
    assert_eq!(marked_words(&result), ["ตา"], "{result}");
    // Both words anywhere, or as a phrase only where they stand in a row.
    let result = search(json!({"query": "ตาราง เวลา", "mode": "keyword", "highlight": true})).await;
    assert_eq!(files(&result), ["schedule.txt", "timetable.txt"], "{result}");
    let result = search(json!({"query": "\"ตารางเวลา\"", "mode": "keyword", "highlight": true})).await;
    assert_eq!(ranked_files(&result), ["timetable.txt"], "{result}");
    assert_eq!(marked_words(&result), ["ตารางเวลา"], "{result}");
    // A prefix: the letters typed so far begin `ตาราง` in both (the ranking text's own reading
    // of the letters, `ตา` and `ร`, also finds the row about eyes).
    let result = search(json!({"query": "ตาร*", "mode": "keyword"})).await;
    let found = files(&result);
    assert!(
        found.contains(&"schedule.txt".to_string()) && found.contains(&"timetable.txt".to_string()),
        "{result}"
    );
    server.stop().await;
}

/// Hebrew is read with its attached particles taken off (analyzer `quarry_multi_v8`): a word
/// finds its forms with `ב` ("in"), `ה` ("the") and the others, and highlights mark them; a
/// `"` between Hebrew letters is an acronym's, so a query of two acronyms is no phrase; a
/// prefix or a misspelt word typed with particles finds the word the rows write without them.
#[tokio::test]
async fn hebrew_words_are_found_with_their_particles() {
    let data = tempfile::tempdir().unwrap();
    let notes = [
        ("library.txt", "הילדים קראו בספר החדש בספרייה העירונית כל אחר הצהריים."),
        ("school.txt", "התלמידים חזרו לבית הספר אחרי החופשה הארוכה של הקיץ."),
        ("army.txt", "דובר צה\"ל מסר כי כוחות הביטחון עצרו חשוד נוסף בלילה."),
        ("embassy.txt", "ראש העיר נפגש עם שגריר ארה\"ב בירושלים לשיחה ארוכה."),
        (
            "browser.txt",
            "האתר שומר עוגיות בדפדפן של המשתמש כדי לזכור את ההעדפות שלו.",
        ),
    ];
    let server = TestServer::start_with_texts(data.path(), "notes", &notes).await;
    let search = |body: Value| {
        let api = &server.api;
        async move { api.search_ok("notes", body).await }
    };
    // "Book" finds "in a book" and "the book", not "library" (`ספרייה`).
    let result = search(json!({"query": "ספר", "mode": "keyword", "highlight": true})).await;
    assert_eq!(files(&result), ["library.txt", "school.txt"], "{result}");
    let mut marked = marked_words(&result);
    marked.sort();
    assert_eq!(marked, ["בספר", "הספר"], "{result}");
    // A phrase of a word and a particled word, where they stand in a row.
    let result = search(json!({"query": "\"בית ספר\"", "mode": "keyword"})).await;
    assert_eq!(ranked_files(&result), ["school.txt"], "{result}");
    // Two acronyms: each found, no phrase between their quotes.
    let result = search(json!({"query": "צה\"ל ארה\"ב", "mode": "keyword"})).await;
    assert_eq!(files(&result), ["army.txt", "embassy.txt"], "{result}");
    // "The cookie…" typed as a prefix with `ה` finds `עוגיות`, and misspelt (`העוגיוט`) it is
    // corrected with the `ה` typed: the word no row writes so, `העוגיות`.
    let result = search(json!({"query": "העוגי*", "mode": "keyword"})).await;
    assert_eq!(ranked_files(&result), ["browser.txt"], "{result}");
    let result = search(json!({"query": "העוגיוט", "mode": "keyword", "suggest": true})).await;
    assert_eq!(result["suggestion"]["query"], "העוגיות", "{result}");
    assert_eq!(ranked_files(&result), ["browser.txt"], "{result}");
    server.stop().await;
}

/// Ukrainian is read by each word's first five letters (analyzer `quarry_multi_v9`): a word
/// finds its other cases and highlights mark them, a prefix longer than five letters finds
/// them, and a form misspelt in its first letters that no row writes is corrected with its
/// own ending.
#[tokio::test]
async fn ukrainian_words_are_found_in_their_other_cases() {
    let data = tempfile::tempdir().unwrap();
    let notes = [
        (
            "geography.txt",
            "Україна розташована у Східній Європі, а її столиця Київ стоїть на березі Дніпра.",
        ),
        (
            "budget.txt",
            "Уряд України затвердив новий бюджет для шкіл і лікарень у великих містах країни.",
        ),
        (
            "tourism.txt",
            "Туристи з усього світу приїжджають до Києва, щоб побачити старі собори та музеї.",
        ),
    ];
    let server = TestServer::start_with_texts(data.path(), "notes", &notes).await;
    let search = |body: Value| {
        let api = &server.api;
        async move { api.search_ok("notes", body).await }
    };
    // "With Ukraine", a case no row writes, finds and marks "Ukraine" and "of Ukraine".
    let result = search(json!({"query": "Україною", "mode": "keyword", "highlight": true})).await;
    assert_eq!(files(&result), ["budget.txt", "geography.txt"], "{result}");
    let mut marked = marked_words(&result);
    marked.sort();
    assert_eq!(marked, ["Україна", "України"], "{result}");
    // A prefix longer than the five letters kept.
    let result = search(json!({"query": "україн*", "mode": "keyword"})).await;
    assert_eq!(files(&result), ["budget.txt", "geography.txt"], "{result}");
    // Misspelt in its first letters: corrected with the ending typed, which no row writes.
    let result = search(json!({"query": "Укрвїною", "mode": "keyword", "suggest": true})).await;
    assert_eq!(result["suggestion"]["query"], "Україною", "{result}");
    assert_eq!(files(&result), ["budget.txt", "geography.txt"], "{result}");
    server.stop().await;
}

/// Ukrainian words with an apostrophe are one word each (analyzer `quarry_multi_v10`),
/// whichever apostrophe a text or a query types: a word finds its other cases and highlights
/// mark each whole, and a misspelt one is corrected with its apostrophe and typed ending.
#[tokio::test]
async fn ukrainian_words_with_apostrophes_are_whole() {
    let data = tempfile::tempdir().unwrap();
    let notes = [
        (
            "memorial.txt",
            "Пам'ять про героїв живе у серцях людей, і кожного року в місті відбуваються урочистості.",
        ),
        (
            "museum.txt",
            "Цей музей присвячений пам’яті загиблих воїнів, тут зберігаються їхні листи та фотографії.",
        ),
        (
            "school.txt",
            "Учні школи вивчали історію рідного краю і склали книгу спогадів для бібліотеки.",
        ),
    ];
    let server = TestServer::start_with_texts(data.path(), "notes", &notes).await;
    let search = |body: Value| {
        let api = &server.api;
        async move { api.search_ok("notes", body).await }
    };
    // "With memory", a case no row writes, typed with the modifier letter apostrophe: the
    // rows typed with ASCII's and with a quotation mark, each word marked whole.
    let result = search(json!({"query": "памʼяттю", "mode": "keyword", "highlight": true})).await;
    assert_eq!(files(&result), ["memorial.txt", "museum.txt"], "{result}");
    let mut marked = marked_words(&result);
    marked.sort();
    assert_eq!(marked, ["Пам'ять", "пам’яті"], "{result}");
    // Misspelt in its first letters: corrected as a row writes the first letters, with
    // the ending typed.
    let result = search(json!({"query": "Пвм'яттю", "mode": "keyword", "suggest": true})).await;
    assert_eq!(result["suggestion"]["query"], "Пам'яттю", "{result}");
    assert_eq!(files(&result), ["memorial.txt", "museum.txt"], "{result}");
    server.stop().await;
}

/// In a collection of English rows and one Latin row (read by its first five letters), a
/// misspelt English word is corrected to the word the rows write, not to a Latin-style cut
/// and the typed ending (`runnning` is no `runni` + `ing`).
#[tokio::test]
async fn a_few_rows_read_by_their_first_letters_leave_other_words_corrections_alone() {
    let data = tempfile::tempdir().unwrap();
    let notes = [
        (
            "morning.txt",
            "The runners were running along the river bank every morning before the sun came up.",
        ),
        (
            "race.txt",
            "After the race the runners rested in the shade and talked about running the next one.",
        ),
        (
            "gallia.txt",
            "Gallia est omnis divisa in partes tres, quarum unam incolunt Belgae, aliam Aquitani, tertiam qui ipsorum lingua Celtae, nostra Galli appellantur.",
        ),
    ];
    let server = TestServer::start_with_texts(data.path(), "notes", &notes).await;
    let search = |body: Value| {
        let api = &server.api;
        async move { api.search_ok("notes", body).await }
    };
    // The Latin row is read as Latin: another form of its word finds it by the first letters.
    let result = search(json!({"query": "divisionem", "mode": "keyword"})).await;
    assert_eq!(ranked_files(&result), ["gallia.txt"], "{result}");
    let result = search(json!({"query": "runnning", "mode": "keyword", "suggest": true})).await;
    assert_eq!(result["suggestion"]["query"], "running", "{result}");
    server.stop().await;
}
