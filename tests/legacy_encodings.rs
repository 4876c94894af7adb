//! Files in the encodings documents are still found in (Shift_JIS, GBK, EUC-KR, Windows-1251,
//! an HTML page declaring Windows-1252, ISO-2022-JP) indexed by `quarry index` and found by
//! a word of their own language through the keyword lane: their text was read, not refused
//! or garbled.

use crate::cli::{index_json, quarry};

/// `text` in the encoding `label` names (every character of it mapped).
fn encoded(label: &str, text: &str) -> Vec<u8> {
    let encoding = encoding_rs::Encoding::for_label(label.as_bytes()).unwrap();
    let (bytes, _, unmappable) = encoding.encode(text);
    assert!(!unmappable, "{label} cannot hold {text}");
    bytes.into_owned()
}

/// Each file: its name, its encoding, its text, a word of it to search for.
const FILES: [(&str, &str, &str, &str); 6] = [
    (
        "neko.txt",
        "Shift_JIS",
        "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。何でも薄暗いじめじめした所でニャーニャー泣いていた事だけは記憶している。",
        "見当",
    ),
    (
        "poem.md",
        "GBK",
        "# 静夜思\n\n床前明月光，疑是地上霜。举头望明月，低头思故乡。这首诗是唐代诗人李白的作品，表达了诗人对故乡的思念之情。",
        "故乡",
    ),
    (
        "hanbando.txt",
        "EUC-KR",
        "대한민국은 동아시아의 한반도 남부에 위치한 민주공화국이다. 수도는 서울특별시이며, 인구는 약 오천만 명이다.",
        "한반도",
    ),
    (
        "cities.csv",
        "windows-1251",
        "город,описание\nМосква,\"столица России, крупнейший по численности населения город страны и её важнейший экономический и культурный центр\"\n",
        "столица",
    ),
    (
        "staedte.html",
        "windows-1252",
        "<!doctype html><html><head><meta charset=\"windows-1252\"><title>Städte</title></head><body><p>Über den Wolken muss die Freiheit wohl grenzenlos sein. Größere Städte wie München und Köln liegen weiter südlich.</p></body></html>",
        "München",
    ),
    (
        "mail.txt",
        "ISO-2022-JP",
        "吾輩は猫である。名前はまだ無い。東京の郵便局から届いた手紙です。",
        "郵便局",
    ),
];

#[test]
fn legacy_encoded_files_are_indexed_and_found_by_their_own_words() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("docs");
    std::fs::create_dir(&source).unwrap();
    for (name, label, content, _) in FILES {
        std::fs::write(source.join(name), encoded(label, content)).unwrap();
    }
    let snap = dir.path().join("snap");
    let report = index_json(source.to_str().unwrap(), &snap);
    assert_eq!(
        (
            report["documents_indexed"].as_u64(),
            report["documents_failed"].as_u64()
        ),
        (Some(FILES.len() as u64), Some(0)),
        "{report}"
    );
    for (name, label, _, word) in FILES {
        let output = quarry(&[
            "search",
            snap.to_str().unwrap(),
            word,
            "--mode",
            "keyword",
            "--json",
            "--top-k",
            "1",
        ]);
        assert!(output.status.success(), "{}", crate::cli::text(&output.stderr));
        let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let top = &result["chunks"][0];
        assert_eq!(top["file_name"], name, "{word} ({label}): {result}");
        assert!(
            top["content"].as_str().unwrap().contains(word),
            "{name} ({label}) read as {}",
            top["content"]
        );
    }
}
