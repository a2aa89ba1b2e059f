"""The values the support set (:mod:`benchmarks.quality.support_data`) is drawn from: names,
cities, jobs, diets and their retractions, drinks, delivery incidents, ordinary support chat,
and what the Russian- and Chinese-speaking customers write. Written for this set."""

from __future__ import annotations

NAMES = ["Marta", "Jonas", "Aisha", "Tomás", "Greta", "Kofi", "Ines", "Liam", "Yara", "Pavel",
         "Chloe", "Ravi", "Sofia", "Henrik", "Nadia", "Oliver"]  # fmt: skip
CITIES = ["Lisbon", "Porto", "Valencia", "Lyon", "Bristol", "Utrecht", "Gdansk", "Bologna",
          "Ghent", "Leeds", "Graz", "Aarhus"]  # fmt: skip
JOBS = ["UX designer", "nurse", "secondary school teacher", "civil engineer", "accountant",
        "physiotherapist", "sous chef", "software developer", "pharmacist", "architect",
        "journalist", "electrician"]  # fmt: skip
NEW_JOBS = [("product manager", "a bank"), ("data analyst", "an insurance firm"),
            ("project lead", "a solar start-up"), ("lecturer", "the university"),
            ("consultant", "a logistics company"),
            ("store manager", "a bookshop chain")]  # fmt: skip
PETS = [("dog", "Biscuit"), ("cat", "Miso"), ("dog", "Pepper"), ("cat", "Luna"),
        ("rabbit", "Clover"), ("dog", "Bruno"), ("parrot", "Kiwi"), ("cat", "Noodle")]  # fmt: skip
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
PLANS = [("Basic", "Family"), ("Basic", "Premium"), ("Family", "Premium"), ("Solo", "Family")]
PAYMENTS = ["PayPal.", "Visa, the one ending 4417.", "Apple Pay please.", "Bank transfer.",
            "Mastercard ending 0932.", "Klarna, if that works."]  # fmt: skip
#: (what is said, what its retraction says, the question's word for it)
DIETS = [
    ("I'm gluten intolerant, so please no bread or pasta in my boxes.",
     "Turns out the gluten thing was a misdiagnosis, I can eat bread and pasta again, "
     "so you can drop that restriction."),
    ("I'm lactose intolerant, so please leave out milk, cream and soft cheese.",
     "Good news: the lactose intolerance was never real, the allergist said so. Dairy is "
     "fine for me again."),
    ("I have a nut allergy, so nothing with peanuts or almonds please.",
     "The nut allergy test came back negative after all, it was a false alarm, so nuts are "
     "fine now."),
    ("I don't eat red meat at all, please keep beef and lamb out of my boxes.",
     "I've started eating red meat again, so beef and lamb are fine, forget what I said "
     "before."),
]  # fmt: skip
DRINKS = [("tea", "coffee"), ("coffee", "tea"), ("sparkling water", "still water"),
          ("oat milk", "regular milk")]  # fmt: skip
#: (what went wrong, a paraphrase for the unfiltered question)
INCIDENTS = [
    ("the courier left the box with the neighbour at number 14 and by the evening the yoghurt "
     "had gone off", "box was left with a neighbour and the yoghurt spoiled"),
    ("the box arrived soaking wet because it sat in the rain on the doorstep for five hours",
     "delivery sat in the rain and arrived soaked"),
    ("half the ice packs had melted and the salmon smelled wrong when I opened it",
     "fish arrived warm with melted ice packs"),
    ("the recipe cards were for a completely different menu than the ingredients inside",
     "recipe cards did not match the ingredients"),
    ("the eggs were smashed and had leaked all over the vegetables and the spice sachets",
     "eggs were broken and leaked over everything"),
    ("the driver tried to deliver at six in the morning and woke up the whole house",
     "driver came far too early in the morning"),
    ("the lid of the olive oil bottle was loose and everything in the bag was greasy",
     "oil leaked over the groceries"),
    ("a bag of frozen peas had split open and there were peas all over the hallway",
     "frozen peas burst open everywhere"),
]  # fmt: skip
FILLERS = [
    ("Thanks!", "You're welcome, enjoy your meals!"),
    ("ok great", "Perfect. Anything else I can help with today?"),
    ("Is there a way to pause the subscription for a week?",
     "Yes, you can pause any week up to the Wednesday before delivery, from the account page."),
    ("What time does the delivery window usually start?",
     "Most deliveries arrive between 8 am and 6 pm; you get a two-hour slot by text."),
    ("Can I recycle the insulation liners?",
     "Yes, the liners are paper-based and go with household paper recycling."),
    ("that's all for now, cheers", "Cheers, have a lovely week!"),
    ("Do you deliver on bank holidays?",
     "We do, though the window can shift by a few hours on those days."),
]  # fmt: skip
#: Ordinary support chat, some of it sharing words with the facts asked about (work, live,
#: drink, day, plan, pay) without stating them.
CHAT = [
    ("Could next week's box have more vegetarian recipes?", "Sure, I've flagged it for the "
     "menu team."),
    ("The lasagne last week was amazing, we had it two nights in a row.", "So glad to hear "
     "it! I'll pass that on to the chefs."),
    ("Can you leave out the plastic cutlery from now on?", "Done, no cutlery from the next box."),
    ("A colleague at work recommended you, does she get a discount?", "Yes, share your "
     "referral link and you both get 20% off a box."),
    ("My sister lives nearby and might order too, can we share a delivery?", "Each account "
     "has its own delivery, but she can pick the same day as you."),
    ("Do you have any tea-flavoured desserts? My kids love matcha.", "We have a matcha "
     "panna cotta on the dessert menu this month."),
    ("Is the coffee in the add-on fair trade?", "Yes, all our coffee is fair trade and "
     "roasted in small batches."),
    ("Which day does the menu for next week come out?", "Every Thursday at noon."),
    ("What's the difference between the plans, roughly?", "Mostly portions and the number "
     "of recipes a week; you can compare them on the pricing page."),
    ("Can I pay for a gift box for a friend?", "Yes, gift boxes can be paid separately at "
     "checkout."),
    ("The app keeps logging me out on my phone.", "Sorry about that, an update that fixes "
     "it comes out this week."),
    ("How long do the sauces keep in the fridge?", "Three to four days once opened."),
    ("I'll be away for a couple of weeks, can I skip them?", "Yes, I've skipped the next two "
     "deliveries for you."),
    ("Are the recipe cards available in larger print?", "Yes, every card is also in the app "
     "where you can zoom in."),
    ("We're having guests on Saturday, can I add a second box just this once?", "Of course, "
     "a one-off extra box is on its way for Saturday."),
    ("Do you have anything for someone who works night shifts? I eat at odd hours.",
     "Our quick recipes take 15 minutes and keep well for later."),
]  # fmt: skip
ACKS = ["Noted, {name}!", "Thanks, {name}, I've saved that.", "Got it, {name}.",
        "Thank you, {name}, that's on your account now."]  # fmt: skip

#: Russian and Chinese customers: (city, job) and the sentences they write, by slot.
OTHER = {
    "ru": {
        "cities": ["Казани", "Самаре", "Перми", "Твери"],
        "jobs": ["бухгалтером", "учителем", "инженером", "врачом"],
        "intro": "Здравствуйте! Я живу в {city} и работаю {job}.",
        "intro_reply": "Здравствуйте! Записал, спасибо.",
        "drink": "В наборы напитков кладите мне, пожалуйста, чай, кофе я не пью.",
        "reversed": "Теперь я пью кофе, а не чай, поменяйте, пожалуйста, напитки.",
        "incident": "Вчерашняя коробка пришла помятой, а банка с мёдом разбилась и всё "
        "было липким.",
        "ok": "Спасибо, всё понятно.",
        "chat": ["Можно в следующий раз больше овощных рецептов?",
                 "Лазанья на прошлой неделе была отличная.",
                 "Уберите, пожалуйста, пластиковые приборы из коробки.",
                 "Я уезжаю на две недели, можно пропустить доставки?"],
        "reply": "Спасибо, передал коллегам и записал в ваш профиль.",
        "questions": [("Где живёт клиент?", "intro"), ("Кем работает клиент?", "intro"),
                      ("Клиент сейчас пьёт чай или кофе?", "reversed"),
                      ("Что случилось с последней доставкой клиента?", "incident")],
    },
    "zh": {
        "cities": ["成都", "杭州", "西安", "青岛"],
        "jobs": ["会计", "老师", "工程师", "护士"],
        "intro": "你好！我住在{city}，在一家公司当{job}。",
        "intro_reply": "您好！已经记下了，谢谢。",
        "drink": "饮品请给我配茶，我不喝咖啡。",
        "reversed": "我现在改喝咖啡了，不要茶了，麻烦帮我换一下饮品。",
        "incident": "昨天的箱子被压坏了，蜂蜜罐子碎了，东西全都黏糊糊的。",
        "ok": "好的，谢谢。",
        "chat": ["下周的菜单能多一些素菜吗？", "上周的千层面特别好吃。",
                 "以后请不要放塑料餐具。", "我要出差两个星期，可以暂停配送吗？"],
        "reply": "谢谢您，已经转告同事并记在您的资料里了。",
        "questions": [("这位客户住在哪里？", "intro"), ("这位客户做什么工作？", "intro"),
                      ("客户现在喝茶还是咖啡？", "reversed"),
                      ("客户上次的快递出了什么问题？", "incident")],
    },
}  # fmt: skip
