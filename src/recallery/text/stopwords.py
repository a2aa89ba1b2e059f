"""The function words of every language the keyword analyzer knows, declared once.

A stop word is counted in a document's length but never indexed and never a query term, so a
shared "the", "mein", "내" or "هي" cannot make an entry a keyword match. The lists are small on
purpose: the commonest articles, pronouns, possessives, prepositions, conjunctions and forms of
"to be"/"to have" of each language, taken from these public lists (subsets, not copies):

- English: the list the keyword index has used since its start (a BM25 baseline's list, kept
  word for word so English ranking does not move).
- German, French, Spanish, Italian, Portuguese, Dutch, Swedish, Danish, Norwegian, Finnish,
  Hungarian, Russian: Snowball's stop lists,
  https://snowballstem.org/algorithms/<language>/stop.txt (BSD licence).
- Turkish, Indonesian, Czech and Romanian: Lucene's ``stopwords.txt`` of each
  (``org/apache/lucene/analysis/<language>``, Apache 2.0); Polish: the commonest function
  words. A word that is also a common English word but not an English stop word ("men", "go",
  "ten", or "take" for také) is left out of these later lists: it would vote English text
  into them.
- Arabic: Lucene's ``org/apache/lucene/analysis/ar/stopwords.txt`` (Apache 2.0).
- Hindi: Lucene's ``org/apache/lucene/analysis/hi/stopwords.txt`` (Apache 2.0).
- Korean: Lucene Nori's default stop tags (particles ``J*``, copula ``VCP``, pronouns ``NP``),
  here as surface forms; particles are stripped, pronouns and adverbs are stop words.
- Chinese and Japanese: Lucene smartcn's ``stopwords.txt`` and Kuromoji's ``stopwords.txt``
  (Apache 2.0), only the entries that are one character or a two-character bigram.

Words are written as people type them; :mod:`recallery.text.analyzer` folds them (case,
accents of Latin letters, ё) the way it folds text before it looks them up.
"""

from __future__ import annotations

#: Latin-script languages the analyzer tells apart, in tie-break order, with their
#: Snowball stemmer (English keeps the original Porter stemmer, as FTS5's ``porter`` does).
LATIN_STEMMERS = {
    "en": "porter",
    "de": "german",
    "fr": "french",
    "es": "spanish",
    "it": "italian",
    "pt": "portuguese",
    "nl": "dutch",
    "sv": "swedish",
    "da": "danish",
    "no": "norwegian",
    "fi": "finnish",
    "tr": "turkish",
    "id": "indonesian",
    "pl": "polish",
    "cs": "czech",
    "ro": "romanian",
    "hu": "hungarian",
    "vi": "",  # no stemmer: a Vietnamese word is one syllable, kept as it is
}

_LATIN = {
    "en": """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only
    or other our ours ourselves out over own same she should so some such than that the
    their theirs them themselves then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would you
    your yours yourself yourselves s t don did didn doesn isn wasn weren won wouldn
    shouldn couldn ll re ve d m o y
    """,
    "de": """
    der die das den dem des ein eine einer eines einem einen und oder aber ich du er sie es
    wir ihr mein meine meinen meinem meiner meines dein deine deinen deinem deiner sein seine
    seinen seinem seiner ihre ihren ihrem ihrer unser unsere unseren unserem euer eure ist
    sind war waren bin bist seid hat habe hast haben hatte hatten in im ins an am auf aus bei
    mit nach von vom zu zum zur für über unter vor nicht kein keine keinen auch noch nur schon
    sehr wie was wer wo wann warum dass als wenn so da dann denn doch ja nein man sich mich
    mir dich dir uns euch ihm ihn ihnen wird werden wurde wurden kann können muss soll will
    dieser diese dieses diesem diesen
    """,
    "fr": """
    le la les l un une des du de d et ou mais je j tu il elle on nous vous ils elles me m te
    t se s moi toi lui leur leurs mon ma mes ton ta tes son sa ses notre nos votre vos est
    sont suis es êtes sommes été être ai as a avons avez ont avait était dans en sur sous
    avec pour par pas ne n ce c cet cette ces qui que qu quoi dont où au aux y
    """,
    "es": """
    el la los las un una unos unas y o pero de del al a en con por para sin sobre es son soy
    eres somos fue era ser estar está están estoy yo tú tu él ella nosotros nosotras vosotros
    ellos ellas mi mis su sus nuestro nuestra nuestros nuestras que qué como cómo donde dónde
    cuando se me te le les lo nos no muy más ya este esta estos estas ese esa hay ha he han
    """,
    "it": """
    il lo la i gli le l un uno una e ed o ma di del dello della dei degli delle da dal
    dalla in nel nella con su sul per tra fra è sono sei siamo era essere ho hai ha abbiamo
    hanno io tu lui lei noi voi loro mio mia miei mie tuo tua suo sua nostro nostra che chi
    non si mi ti ci vi questo questa quello quella come dove quando anche molto più
    """,
    "pt": """
    o a os as um uma uns umas e ou mas de do da dos das em no na nos nas com por para sem é
    são sou somos era ser estar está estou eu tu você ele ela nós eles elas meu minha meus
    minhas seu sua seus suas que não se me te lhe muito mais como onde quando também já este
    esta isso isto ao aos
    """,
    "nl": """
    de het een en of maar ik jij je hij zij ze wij we jullie mijn jouw zijn haar ons onze is
    ben bent was waren heb hebt heeft hebben had in op aan met van voor naar bij uit te niet
    geen ook nog al dat die dit wat wie waar hoe als dan er om tot
    """,
    "sv": """
    och det att i en ett jag du hon han vi ni de dem mig sig oss er min mitt mina din
    ditt dina sin sitt sina hans hennes deras vår vårt våra som på med var är för så av
    inte om hade har har från ut när efter upp vad över än kan alla någon något eller
    allt mycket sedan denna detta dessa utan varit hur ingen blir blev bli vara mellan
    varför varje vilka vilken vem där här nu också
    """,
    "da": """
    og i jeg det at en et den til er som på de med han af ikke der var mig sig et har om vi
    min mit havde hun nu da fra du ud dem os op hvor eller hvad skal selv alle vil blev
    kunne ind når være noget ville deres efter denne dette også hende meget sine vor
    disse hvis nogle hos blive mange bliver hendes været jer hvorfor hvem
    """,
    "no": """
    og i jeg det at en et den til er som på de med han av ikke der var meg seg har om vi min
    mitt hadde hun nå da ved fra du ut dem oss opp kan hvor eller hva skal selv alle vil
    bli ble blitt kunne inn når være noen noe ville dere deres etter denne deg sitt mot meget
    hvorfor dette disse uten hvordan ingen ditt blir samme hvem hvis både enn fordi før mange
    også vært
    """,
    "fi": """
    ja on ei se että hän oli olla olen olet ovat olemme olette olisi ollut minä minun minua
    minulla minulle sinä sinun sinua sinulla sinulle hänen häntä hänellä hänelle me meidän
    meillä meille te teidän he heidän heillä tämä tämän tätä tässä tuo tuon sen sitä siinä
    siitä nämä ne niiden niitä kuka mikä mitä missä mistä mihin joka jonka jota jossa kun
    jos koska kuin mutta niin sekä tai vai vaikka kanssa nyt myös
    """,
    "tr": """
    ve ile ama fakat veya bir bu şu o ben sen siz onlar benim senin onun bizim sizin
    onların bana sana ona beni seni onu bende sende da de ki mi mı mu mü için gibi kadar daha
    çok en her hiç ne neden nasıl nerede kim hangi var yok değil olan olarak ise diye şey
    """,
    "id": """
    yang dan di ke dari ini itu dengan untuk tidak ada adalah akan pada juga sudah saya aku
    kamu anda dia ia kami kita mereka atau dalam bisa oleh sebagai karena jika kalau apa
    siapa mana bagaimana mengapa kapan tetapi tapi namun sangat lebih telah sedang masih
    belum harus bahwa seperti saja hanya punya
    """,
    "pl": """
    i w we z ze na do od po o u za przez dla bez pod nad przy się nie to jest są być był była
    było byli jestem jesteś ja ty on ona ono my wy oni mój moja moje moi twój twoja
    twoje jego jej ich nasz nasza nasze ta te tego tej tym że czy lub albo jak co kto
    gdzie kiedy dlaczego już tylko też także bardzo mnie mi ci mu nam wam im sobie
    """,
    "cs": """
    a v ve na se je to že s z do o ke u i jsem jsi jsme jste jsou byl byla bylo byli být
    já ty on ona ono my vy oni mě mi tě ti mu jí jeho její jejich můj moje má tvůj tvoje náš
    naše váš ta ty co kdo kde kdy proč jak nebo jen už ještě když než při za od po
    bez
    """,
    "ro": """
    și în la de cu pe un o ca este nu mai din sunt eu tu el ea noi voi ei ele meu mea mei
    mele tău său lui nostru noastră acest această aceasta acesta ce cine unde când cum pentru
    dar sau fost am are au avea foarte doar
    """,
    "hu": """
    a az egy és is hogy nem van volt lesz meg már csak még mint vagy mert ez azt ezt én te
    ő mi ti engem téged őt minket őket nekem neked neki nekünk nektek nekik ki mit hol
    mikor miért hogyan sem majd után alatt között előtt mellett pedig vagyok vagyunk
    """,
    "vi": """
    và của là có không tôi các những được cho một này trong với đã để khi thì mà cũng rất đó
    ấy nó họ chúng mình gì sao nào đâu vì nên nhưng hay hoặc từ đến đang sẽ vẫn còn đều chỉ ở
    bị rồi lắm nhé
    """,
}

#: Letters only Vietnamese writes: its own vowels and d, and vowels with a tone mark and a hat.
_VIETNAMESE = "ăđơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ"
#: Letters that vote for a language (looked for before case folding: ß becomes ss).
LATIN_LETTERS = (
    ("de", "äöüßÄÖÜẞ"),
    ("es", "ñÑ¿¡"),
    ("pt", "ãõÃÕ"),
    ("sv", "åäöÅÄÖ"),
    ("da", "æøåÆØÅ"),
    ("no", "æøåÆØÅ"),
    ("fi", "äöÄÖ"),
    ("tr", "ğışçöüĞİŞÇÖÜ"),
    ("pl", "ąęłńśźżĄĘŁŃŚŹŻ"),
    ("cs", "řůěčšžýŘŮĚČŠŽÝ"),
    ("ro", "șțăâîȘȚĂÂÎ"),
    ("hu", "őűöüŐŰÖÜ"),
    ("vi", _VIETNAMESE + _VIETNAMESE.upper()),
)

#: The languages told apart first, whose stored texts keep their analysis: their one-letter
#: stop words vote for them, and a form that two of their words share without accents votes
#: twice. A later language's single letters ("u", "v", "w", "z") vote for none (they are as
#: often an abbreviation or a variable in English text: "u{i}" or "hnsw (v vector_cosine_ops)"
#: would have been read as Polish or Czech), and a shared form once (Swedish *vår* and *var*
#: made "Yer fıstığına alerjim var" Swedish).
FIRST_LATIN = frozenset({"en", "de", "fr", "es", "it", "pt", "nl"})

#: The languages whose stop words vote and are left out only as written, with their marks:
#: Vietnamese written without its tones is made of English words (mà, rất, vẫn, còn: "ma",
#: "rat", "van", "con"), and of its own (đã, "already", is not Đà of Đà Nẵng).
VOTES_AS_WRITTEN = frozenset({"vi"})

LATIN_STOP_WORDS: dict[str, frozenset[str]] = {
    lang: frozenset(words.split()) for lang, words in _LATIN.items()
}

RUSSIAN = frozenset(
    """
    и в во не что он на я с со как а то все всё она так его но да ты к у же вы за бы по только
    ее её мне было вот от меня еще ещё нет о об из ему теперь когда даже ну ли если уже или ни
    быть был была были него до вас вам ведь там потом себя себе ей может они тут где есть надо
    ней для мы тебя тебе их чем сам без чего тоже под будет ж тогда кто этот этого этом эта эти
    эту этой того потому какой ним здесь мой моя моё мое мои моего моей мою моих моим моими
    моем твой твоя твои свой своя свои свою тем чтобы нее сейчас всех при два над тот через нас
    про всего них много три перед том им более всегда всю между
    какая какое какие какую каком каких почему зачем сколько куда откуда кем
    """.split()  # noqa: SIM905
)

ARABIC = frozenset(
    """
    في من على إلى الى عن مع هو هي هم هن هما أنا انا أنت انت أنتم نحن هذا هذه ذلك تلك هؤلاء
    التي الذي الذين اللذان اللتان و أو او ثم لا لم لن ما ماذا كان كانت يكون قد كل بعد قبل
    عند لدي لي له لها لهم إن ان أن إنه انه أنه هل يا بين حتى أي اي كما لكن ذات فيه فيها
    منه منها عليه عليها به بها أين اين متى كيف لماذا كم الآن الان
    """.split()  # noqa: SIM905
)

#: Hindi, with the auxiliaries of its verb phrases (करता, रहा, गया, होता), which the Hindi
#: stemmer would otherwise make one term with the verbs they follow.
HINDI = frozenset(
    """
    मैं मैंने मेरा मेरी मेरे मुझे मुझको हम हमने हमारा हमारी हमारे हमें तुम तुम्हारा आप आपका आपकी
    आपके वह वे यह ये उस उसने उसका उसकी उसके उन उन्होंने उनका इस इसका है हैं हूँ हूं हो था थी थे
    और या का की के में से को पर ने तक लिए साथ भी तो ही एक नहीं अपना अपनी अपने क्या कौन कौनसा
    कहाँ कहां कब कैसे क्यों कितना कितने किस किसे अब कर करता करती करते करना करने करें किया गया गई
    गए हुआ हुई हुए होता होती होते होना होने रहा रही रहे सकता सकती सकते जा जाता जाती जाते वाला
    वाली वाले लेकिन कि जो जब तब यहाँ वहाँ कुछ कोई सभी फिर द्वारा न ना
    """.split()  # noqa: SIM905
)

#: Korean words that are stop words whole (after a particle is stripped: "나는" is "나"),
#: question words among them (뭐, 어디, 누가 as 누), as English lists "what" and "where".
KOREAN = frozenset(
    """
    나 내 저 제 너 네 우리 저희 너희 그 그녀 그들 이 저것 이것 그것 것 수 등 및 그리고
    그러나 하지만 또는 또 더 매우 아주 정말 너무
    뭐 무엇 무슨 어디 언제 누 누구 어떤 어느 왜 어떻게 몇 지금 요즘
    """.split()  # noqa: SIM905
)

#: Korean verb endings as a query's bigrams ("살아요" asks for 살아, not 아요; "일해요" for 일해,
#: not 해요): the polite and formal endings every other sentence shares, never a term of a
#: query (a stored text keeps them, as a stop word counts in its length).
KOREAN_ENDINGS = frozenset(
    """
    아요 어요 여요 해요 세요 워요 와요 니다 습니 었어 았어 했어 였어 겠어 지요 네요 군요 는데
    """.split()  # noqa: SIM905
)

#: Particles and copula endings stripped from the end of a Korean word (eojeol), longest
#: first, each with the syllable it follows: ":C" after a final consonant (batchim), ":V"
#: after a vowel, neither after either. Only one is stripped, and a syllable always stays.
_PARTICLES = """
    에서는 에게서 으로는:C 이에요:C 입니다 에서 에게 께서 으로:C 부터 까지 보다 처럼 한테
    이랑:C 하고 예요:V 이다:C 은:C 는:V 이:C 가:V 을:C 를:V 과:C 와:V 로:V 랑:V 의 에 도 만
"""
KOREAN_PARTICLES: tuple[tuple[str, str], ...] = tuple(
    sorted((p.partition(":")[::2] for p in _PARTICLES.split()), key=lambda p: -len(p[0]))
)

#: Chinese and Japanese function characters and bigrams, question words among them (什么, 哪里,
#: 何, どこ), as English lists "what" and "where": never indexed alone, never a term.
CJK = frozenset(
    """
    的 了 是 在 和 与 及 也 就 都 而 着 或 之 其 这 那 我 你 他 她 它 们 吗 呢 吧 啊
    我们 你们 他们 她们 它们 这个 那个 这些 那些 就是 但是 因为 所以 如果 而且 或者
    の は が を に で と も へ や か ね よ 私
    です ます まし した して この その あの これ それ あれ から まで ので けど
    什么 哪里 哪儿 哪个 怎么 为什 多少 谁 哪 几 现在
    何 誰 なに どこ いつ だれ どう なぜ どの どれ 今
    """.split()  # noqa: SIM905
)

__all__ = [
    "ARABIC",
    "CJK",
    "HINDI",
    "KOREAN",
    "KOREAN_ENDINGS",
    "KOREAN_PARTICLES",
    "LATIN_STEMMERS",
    "LATIN_STOP_WORDS",
    "RUSSIAN",
]
