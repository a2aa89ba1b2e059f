"""The slot patterns of Chinese, Japanese, Korean, Hindi and Thai, where the speaker is found
at the start of a sentence or clause (or, in Hindi, by the verb's person at its end) rather
than by a first-person verb form alone; kept apart from :mod:`recallery.text.slot_tables`,
which collects every language's table."""

from __future__ import annotations

import re

from recallery.text.slot_base import Carried, table

# --- Chinese, Japanese, Korean: the sentence opens with the speaker, time words or nothing --------

_ZH_VALUE = r"(?P<value>[^，。！？、；：,.!?;:\s了]{1,20})"
_ZH_NOW = (
    r"(?:现在|目前|如今|已经|刚刚|刚才|刚|最近|前不久|不久前|前几天|这几天|今天|昨天|前天|去年|"
    r"今年|上个月|这个月|本月|上周|上星期|上礼拜|这周|本周|周末|终于|也|还|一直|自己|就|开始)*"
)
_ZH_OPEN = r"(?:^|(?<=[，。！？、；,.!?;\s]))"
ZH = table(
    (
        ("home", r"我们?" + _ZH_NOW + r"(?:住在|住|生活在|定居在|定居于|搬到了?|搬去了?|搬回了?|"
         r"搬家到了?)" + _ZH_VALUE),
        ("home", r"我们?" + _ZH_NOW + r"在(?!家里?(?:生活|居住|住))"
         r"(?P<value>[^，。！？、；,.!?;\s]{1,15}?)(?:生活|居住|住)"),
        ("home", r"我家" + _ZH_NOW + r"在" + _ZH_VALUE),
        ("work", r"(?:(?:我|" + _ZH_OPEN + ")" + _ZH_NOW + r"在[^，。！？、；,.!?;]{1,12}?|我)"
         + _ZH_NOW + r"(?:当|担任)(?!时|然|天|地|初|年|中|前|作|成)了?(?:一名|一位|一个|个|名)?"
         + _ZH_VALUE),
        ("work", r"(?:我|" + _ZH_OPEN + ")" + _ZH_NOW
         + r"在(?!家里?(?:上班|工作))(?P<value>[^，。！？、；,.!?;\s]{1,15}?)(?:上班|工作|任职)"),
        ("work", r"我" + _ZH_NOW + r"是(?:一名|一位|名)" + _ZH_VALUE),
        ("work", r"我的(?:新)?(?:工作|职业)是(?:一名|一位|一个|个|名)?" + _ZH_VALUE),
        ("name", r"我(?:的名字)?叫(?!了)" + _ZH_VALUE),
        ("name", r"我的名字是" + _ZH_VALUE),
        ("age", r"(?:我|" + _ZH_OPEN + ")" + _ZH_NOW + r"(?:今年)?(?P<value>\d{1,3}) ?岁"),
        ("allergy", r"我" + _ZH_NOW + r"对(?P<value>[^，。！？、；,.!?;\s]{1,12}?)过敏"),
        ("favourite {}", r"我最(?:喜欢|爱)的?(?P<name>[^，。！？、；,.!?;\s的是]{1,6})的?是"
         + _ZH_VALUE),
    ),
    filler=r"了|啦|呢|吧|啊",
    until=r"和|跟|并且|而且|但是|但|因为",
    asks=r"哪|什么|谁|多少|几|怎么",
    words=False,
)  # fmt: skip

#: A Japanese sentence about its speaker: it opens with the speaker (私は), time words or
#: nothing, up to the value; a clause after a te-form (住んでいて、) goes on with its subject.
_JA_TIME = (
    r"(?:今日|今週|今月|今朝|今年|今度|今|現在|最近|昨日|一昨日|先日|先月|先週|去年|この前|"
    r"この間|来月|来週|週末|ついに|やっと)"
)
#: Atomic: 今日は is one time word, never 今 and a topic 日は.
_JA_WHEN = r"(?>" + _JA_TIME + r"(?:は|に|、)?)"
_JA_ME = r"(?:私|僕|俺|わたし|あたし|ぼく|おれ)(?:は|も|が)"
_JA_OPEN = r"(?:^|(?<=[。！？!?\n])|(?<=て、))\s*(?:" + _JA_ME + r"、?|" + _JA_WHEN + r")*"
_JA_VALUE = r"(?P<value>[^\s、。！？,.!?はがもをにへでと]{1,20})"
_JA_CARRIED = Carried(
    re.compile(r"て、"),
    re.compile(r"\s*(?:" + _JA_WHEN + r")*" + _JA_ME),
    re.compile(
        r"\s*(?:" + _JA_WHEN + r")*(?!" + _JA_TIME + r"(?:は|が))"
        r"[^\s、。！？,.!?はがもをにへでと]{1,10}(?:は|が)(?!ら)"
    ),
)
JA = table(
    (
        ("home", _JA_OPEN + _JA_VALUE + r"(?:に|へ)(?:住んで|住ん|住み|暮らして|暮らし|引っ越し|"
         r"引越し|移り住|移住し|転居し)"),
        ("home", _JA_OPEN + _JA_VALUE + r"在住"),
        ("work", _JA_OPEN + r"(?:[^\s、。！？,.!?]{1,15}?で)?" + _JA_VALUE + r"(?:として|で)"
         r"(?:働いて|働き|働く|勤めて|勤務して)"),
        ("work", _JA_OPEN + _JA_VALUE + r"(?:に|へ)(?:勤めて|勤務|転職|就職)"),
        ("work", r"(?:私|僕|俺)?の?(?:仕事|職業)は" + _JA_VALUE + r"(?:です|だ)"),
        ("name", r"(?:私|僕|俺)?の?名前は" + _JA_VALUE + r"(?:です|だ)"),
        ("name", _JA_OPEN + _JA_VALUE + r"と(?:申します|いいます|言います)"),
        ("age", _JA_OPEN + r"(?P<value>\d{1,3})歳"),
        ("allergy", _JA_OPEN + _JA_VALUE + r"(?:に|の)?アレルギー"),
        ("favourite {}", r"(?:一番)?好きな(?P<name>[^\s、。！？,.!?は]{1,6})は" + _JA_VALUE
         + r"(?:です|だ)"),
    ),
    filler=r"今|現在",
    until=r"そして|けど",
    asks=r"どこ|何|なに|誰|だれ|いくつ|どれ|どの",
    words=False,
    carried=_JA_CARRIED,
)  # fmt: skip

#: The same in Korean; a clause after a -고 clause (살고) goes on with its subject.
_KO_WHEN = (
    r"(?:지금은?|현재|요즘|최근에?|오늘|어제|그저께|작년에|올해|지난\s?달에|지난\s?주에?|"
    r"이번\s?주에?|이번\s?달에|주말에|며칠\s?전에|얼마\s?전에|이번에|드디어|이제|곧)(?:은|는)?"
)
_KO_ME = r"(?:저는|나는|저도|나도|제가|내가|저희는|우리는|저희도|우리도)"
_KO_OPEN = r"(?:^|(?<=[.!?。\n])|(?<=고\s))\s*(?:(?:" + _KO_ME + "|" + _KO_WHEN + r")\s+)*"
#: One or two words (서울 강남구), the first not a topic (언니는 부산에 살아요 is not the speaker).
_KO_VALUE = r"(?P<value>(?:[^\s.,!?]+(?<![은는이가도])\s)??[^\s.,!?]+?)"
_KO_IS = r"(?:이에요|예요|입니다|이야|야|이다|이고|고)?(?=[\s.,!?]|$)"
_KO_CARRIED = Carried(
    re.compile(r"고\s"),
    re.compile(r"\s*(?:" + _KO_WHEN + r"\s+)*" + _KO_ME + r"\s"),
    re.compile(
        r"\s*(?:" + _KO_WHEN + r"\s+)*(?!" + _KO_WHEN + r"\s)"
        r"\S+(?:은|는|이|가)\s"
    ),
)
KO = table(
    (
        ("home", _KO_OPEN + _KO_VALUE + r"(?:에서|에)\s+(?:살|삽니다|거주)"),
        ("home", _KO_OPEN + _KO_VALUE + r"(?:으로|로)\s+이사"),
        ("work", _KO_OPEN + r"(?:[^.!?]{1,30}?에서\s+)?" + _KO_VALUE + r"(?:으로|로)\s+"
         r"(?:일하|일해|일합|근무)"),
        ("work", _KO_OPEN + _KO_VALUE + r"에서\s+(?:일하|일해|일합|근무)"),
        ("work", _KO_OPEN + _KO_VALUE + r"(?:에|으로|로)\s+(?:취직|입사|이직)"),
        ("work", r"(?<!\S)(?:제|내)\s+(?:새\s+)?직업은\s+(?P<value>\S+?)" + _KO_IS),
        ("name", r"(?<!\S)(?:제|내)\s+이름은\s+(?P<value>\S+?)" + _KO_IS),
        ("age", _KO_OPEN + r"(?P<value>\d{1,3})\s?살"),
        ("allergy", _KO_OPEN + _KO_VALUE + r"\s?알레르기가\s+있"),
        ("allergy", _KO_OPEN + _KO_VALUE + r"(?:에|에게)\s+알레르기"),
        ("favourite {}", r"(?<!\S)(?:제가|내가)\s+(?:제일|가장)\s+좋아하는\s+"
         r"(?P<name>\S+?)(?:은|는)\s+(?P<value>\S+?)" + _KO_IS),
    ),
    filler=r"지금|이제",
    until=r"그리고|하지만",
    asks=r"어디|무엇|뭐|누구|몇|어느",
    carried=_KO_CARRIED,
)  # fmt: skip

# --- Hindi and Thai: the speaker opens the clause -------------------------------------------------

#: Hindi puts the verb last: the value is the words between the speaker (and when) and the
#: postposition before the verb ("मैं दिल्ली में रहती हूँ"), at most four of them, and the verb
#: ends in the speaker's हूँ (हम's हैं): "मेरी बहन मुंबई में रहती है" is the sister's. A clause
#: after और names no subject and is the speaker's only by its हूँ.
_HI_WHEN = (
    r"(?:अब|आजकल|फिलहाल|फ़िलहाल|हाल ही में|आज|कल|पिछले (?:साल|महीने|हफ्ते|हफ़्ते|सप्ताह)|"
    r"इस (?:साल|महीने|हफ्ते|हफ़्ते|सप्ताह)|भी)"
)
_HI_I = r"(?<!\S)(?:(?P<we>हम)|मैं|और)(?:\s" + _HI_WHEN + r")*\s"
_HI_VALUE = r"(?P<value>[^\s।.!?,]+(?:\s[^\s।.!?,]+){0,3}?)"
_HI_AM = r"\s(?(we)हैं|(?:हूँ|हूं))(?=[\s।.!?,]|$)"
_HI_DO = r"\s(?:काम|नौकरी)\s(?:करता|करती|करते)" + _HI_AM
_HI_MOVED = r"\sहो\s(?:गया|गई|गयी|गए|गये)(?:\s(?:हूँ|हूं|हैं))?(?=[\s।.!?,]|$)"
HI = table(
    (
        ("home", _HI_I + _HI_VALUE + r"\sमें\s(?:रहता|रहती|रहते)" + _HI_AM),
        ("home", _HI_I + _HI_VALUE + r"(?:\sमें)?\s(?:शिफ्ट|शिफ़्ट|स्थानांतरित)" + _HI_MOVED),
        ("work", _HI_I + _HI_VALUE + r"\s(?:के\sरूप\sमें|की\sतरह)" + _HI_DO),
        ("work", _HI_I + _HI_VALUE + r"\s(?:में|पर)" + _HI_DO),
        ("work", _HI_I + r"पेशे\sसे\s" + _HI_VALUE + _HI_AM),
        ("name", r"(?<!\S)मेरा\sनाम\s(?P<value>[^\s।.!?,]+)\s(?:है|हैं)"),
        ("age", r"(?<!\S)(?:मेरी\sउम्र|मैं)\s(?P<value>\d{1,3})\s(?:साल|वर्ष)"),
        ("allergy", r"(?<!\S)मुझे(?:\s" + _HI_WHEN + r")*\s" + _HI_VALUE
         + r"\sसे\sएलर्जी"),
        ("favourite {}", r"(?<!\S)(?:मेरा|मेरी|मेरे)\sपसंदीदा\s(?P<name>[^\s।.!?,]+)\s"
         + _HI_VALUE + r"\s(?:है|हैं)(?=[\s।.!?,]|$)"),
    ),
    filler=r"अब|भी|एक",
    until=r"और|लेकिन|क्योंकि",
    asks=r"कहाँ|कहां|क्या|कौन|कौनसा|कब|कैसे|किस|किसी",
)  # fmt: skip

#: Thai writes no spaces between words: the speaker opens a clause (after a space or at the
#: start, time words before it, so ของฉัน, "my", in "พี่สาวของฉันย้ายไป..." opens nothing), and
#: the value runs to the clause's end, cut before when (เมื่อ), with whom (กับ) and since
#: (ตั้งแต่). A clause after และ names no subject and goes on with the one before it.
_TH_WHEN = r"(?:ตอนนี้|เดี๋ยวนี้|ปัจจุบัน|ล่าสุด|วันนี้|เมื่อวาน|(?:ปี|เดือน|อาทิตย์|สัปดาห์)ที่แล้ว)"
_TH_ME = r"(?:ฉัน|ผม|ดิฉัน|เรา|พวกเรา)"
_TH_I = (
    r"(?:(?:^|(?<=\s))(?:" + _TH_WHEN + r"\s?)*" + _TH_ME + r"|(?<=และ))"
    r"(?:ตอนนี้|เพิ่ง|ได้|ก็|ยัง|จะ)*"
)
_TH_VALUE = r"(?P<value>[^\s.!?,;:]{2,40})"
_TH_CARRIED = Carried(
    re.compile(r"และ"),
    re.compile(r"\s*(?:" + _TH_WHEN + r"\s?)*" + _TH_ME),
    re.compile(
        r"\s*(?:" + _TH_WHEN + r"\s?)*(?:พี่|น้อง|แม่|พ่อ|ลูก|สามี|ภรรยา|แฟน|เพื่อน|ยาย|ย่า|"
        r"ตา|ปู่|ป้า|ลุง|น้า|อา|หลาน|เขา|เธอ|หัวหน้า|คุณ)"
    ),
)
TH = table(
    (
        ("home", _TH_I + r"(?:อาศัยอยู่|พักอยู่|อยู่)(?:ที่|ใน)" + _TH_VALUE),
        ("home", _TH_I + r"ย้าย(?:บ้าน)?(?:ไป|มา)(?:อยู่)?(?:ที่)?" + _TH_VALUE),
        ("work", _TH_I + r"(?:ทำงาน|มีอาชีพ)เป็น" + _TH_VALUE),
        ("work", _TH_I + r"ทำงาน(?:อยู่)?(?:ที่|ใน|กับ|ให้)" + _TH_VALUE),
        ("work", _TH_I + r"(?:ได้งานใหม่|เปลี่ยนงานไป|ย้ายงานไป)(?:ที่|เป็น)?" + _TH_VALUE),
        ("name", _TH_I + r"ชื่อ(?P<value>[^\s.!?,;:]{2,20})"),
        ("age", _TH_I + r"อายุ\s?(?P<value>\d{1,3})\s?ปี"),
        ("allergy", _TH_I + r"แพ้" + _TH_VALUE),
    ),
    filler=r"ตอนนี้|แล้ว|ค่ะ|ครับ|คะ|นะ",
    until=r"เมื่อ|กับ|ตั้งแต่|และ|แต่|เพราะ",
    asks=r"ที่ไหน|อะไร|ใคร|เท่าไร|เท่าไหร่|ยังไง|อย่างไร|ไหน",
    words=False,
    carried=_TH_CARRIED,
)  # fmt: skip

__all__ = ["HI", "JA", "KO", "TH", "ZH"]
