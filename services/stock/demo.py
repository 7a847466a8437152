"""A realistic demo network, deterministic for a seed.

Two CDs (Cajamar-SP, Extrema-MG) and stores in real Brazilian cities at their
true coordinates; footwear and apparel of several brands with real size runs
(shoes 33–44 or a sub-run, apparel PP–GG), one colour per SKU; 90 days of
Poisson daily sales shaped by store size, size curve, weekday and a campaign;
a stock snapshot with real imbalances (some stores short, others carrying
months of cover, CDs holding reserve); one campaign active today; one account
per ``papel`` plus a superadmin.

Stores, products, stock, sales and the campaign are written through the
importer (``services.stock.importer.import_rows``), the same validation and
bulk-write path as ``flask import``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, timedelta

import numpy as np
from sqlalchemy import func, select, update

from extensions import db
from models.auth import User
from models.stock import Campanha, Estoque, Loja, Produto, RegrasRemanejamento, Venda
from models.stock_batches import AcaoRecomendacao, Lote, Recomendacao
from services import auth as auth_service
from services.clock import today
from services.stock import importer

DEFAULT_STORES = 25
DEFAULT_PRODUCTS = 60
DEFAULT_SEED = 42
SALES_DAYS = 90
DEMO_PASSWORD = "giro-demo-2026"
DEMO_EMAIL_DOMAIN = "demo.giro.com.br"

# (codigo, nome, cidade, lat, lng)
CDS: tuple[tuple[str, str, str, float, float], ...] = (
    ("CD-CAJ", "CD Cajamar", "Cajamar - SP", -23.3556, -46.8769),
    ("CD-EXT", "CD Extrema", "Extrema - MG", -22.8546, -46.3178),
)

# (nome, cidade, lat, lng, size factor): big capitals sell more. The order
# spreads the network over the country, so any prefix is a plausible chain.
STORES: tuple[tuple[str, str, float, float, float], ...] = (
    ("Paulista", "São Paulo - SP", -23.5614, -46.6559, 3.0),
    ("Barra", "Rio de Janeiro - RJ", -23.0004, -43.3659, 2.6),
    ("Savassi", "Belo Horizonte - MG", -19.9385, -43.9347, 1.9),
    ("Asa Sul", "Brasília - DF", -15.8130, -47.8920, 1.8),
    ("Batel", "Curitiba - PR", -25.4420, -49.2890, 1.6),
    ("Moinhos", "Porto Alegre - RS", -30.0277, -51.2020, 1.6),
    ("Barra", "Salvador - BA", -13.0090, -38.5300, 1.6),
    ("Boa Viagem", "Recife - PE", -8.1190, -34.9030, 1.5),
    ("Aldeota", "Fortaleza - CE", -3.7380, -38.4960, 1.5),
    ("Setor Bueno", "Goiânia - GO", -16.7060, -49.2700, 1.2),
    ("Cambuí", "Campinas - SP", -22.8930, -47.0520, 1.3),
    ("Centro", "Florianópolis - SC", -27.5954, -48.5480, 1.1),
    ("Adrianópolis", "Manaus - AM", -3.1019, -60.0100, 1.3),
    ("Nazaré", "Belém - PA", -1.4530, -48.4830, 1.2),
    ("Praia do Canto", "Vitória - ES", -20.2976, -40.2958, 1.0),
    ("Ponta Negra", "Natal - RN", -5.8770, -35.1780, 0.9),
    ("Tambaú", "João Pessoa - PB", -7.1150, -34.8230, 0.9),
    ("Ponta Verde", "Maceió - AL", -9.6640, -35.7010, 0.9),
    ("Jardins", "Aracaju - SE", -10.9472, -37.0731, 0.8),
    ("Jóquei", "Teresina - PI", -5.0892, -42.8019, 0.8),
    ("Renascença", "São Luís - MA", -2.5000, -44.2900, 0.9),
    ("Centro", "Campo Grande - MS", -20.4697, -54.6201, 0.9),
    ("Goiabeiras", "Cuiabá - MT", -15.5830, -56.0830, 0.9),
    ("Gleba Palhano", "Londrina - PR", -23.3300, -51.1850, 0.8),
    ("Centro", "Joinville - SC", -26.3045, -48.8487, 0.8),
    ("Jardim Botânico", "Ribeirão Preto - SP", -21.2130, -47.8080, 0.9),
    ("Gonzaga", "Santos - SP", -23.9670, -46.3330, 0.9),
    ("Tijuca", "Rio de Janeiro - RJ", -22.9250, -43.2330, 1.4),
    ("Moema", "São Paulo - SP", -23.6010, -46.6650, 1.8),
    ("Centro", "Uberlândia - MG", -18.9186, -48.2772, 0.8),
    ("Icaraí", "Niterói - RJ", -22.9050, -43.1090, 0.9),
    ("Centro", "Sorocaba - SP", -23.5015, -47.4526, 0.8),
    ("Zona 7", "Maringá - PR", -23.4205, -51.9333, 0.7),
    ("São Pelegrino", "Caxias do Sul - RS", -29.1678, -51.1794, 0.7),
    ("Aquarius", "São José dos Campos - SP", -23.2230, -45.9000, 0.8),
    ("Centro", "Juiz de Fora - MG", -21.7642, -43.3496, 0.7),
    ("Centro", "Feira de Santana - BA", -12.2664, -38.9663, 0.7),
    ("Centro", "Porto Velho - RO", -8.7612, -63.9004, 0.6),
    ("Plano Diretor Sul", "Palmas - TO", -10.1840, -48.3336, 0.6),
    ("Centro", "Macapá - AP", 0.0349, -51.0694, 0.5),
)
MAX_STORES = len(STORES)

SHOES_MEN = tuple(str(n) for n in range(38, 45))
SHOES_WOMEN = tuple(str(n) for n in range(34, 41))
SHOES_WOMEN_WIDE = tuple(str(n) for n in range(33, 41))
SHOES_UNISEX = tuple(str(n) for n in range(33, 45))
APPAREL = ("PP", "P", "M", "G", "GG")


@dataclass(frozen=True)
class _Line:
    """A product line: category, name stem, size run, where the size curve peaks, base demand."""

    categoria: str
    code: str
    stem: str
    grid: tuple[str, ...]
    peak: str
    daily: float  # units per product per day in an average store
    apparel: bool


LINES: tuple[_Line, ...] = (
    _Line("Tênis", "TEN", "Tênis Corrida", SHOES_UNISEX, "39", 1.3, False),
    _Line("Blusas e camisetas", "CAM", "Camiseta Básica", APPAREL, "M", 1.6, True),
    _Line("Sandálias", "SAN", "Sandália Rasteira", SHOES_WOMEN_WIDE, "36", 1.0, False),
    _Line("Calças", "CAL", "Calça Jeans Reta", APPAREL, "M", 0.9, True),
    _Line("Tênis", "TCS", "Tênis Casual Masculino", SHOES_MEN, "41", 0.9, False),
    _Line("Vestidos", "VES", "Vestido Midi", APPAREL, "P", 0.8, True),
    _Line("Botas", "BOT", "Bota Cano Curto Feminina", SHOES_WOMEN, "36", 0.5, False),
    _Line("Bermudas", "BER", "Bermuda Sarja", APPAREL, "G", 1.0, True),
    _Line("Sapatênis", "SPT", "Sapatênis Couro", SHOES_MEN, "40", 0.6, False),
    _Line("Jaquetas", "JAQ", "Jaqueta Corta-vento", APPAREL, "M", 0.5, True),
    _Line("Sapatilhas", "SPL", "Sapatilha Bico Fino", SHOES_WOMEN, "36", 0.8, False),
    _Line("Blusas e camisetas", "POL", "Camisa Polo Piquet", APPAREL, "G", 0.9, True),
)

# (marca, code, makes footwear, makes apparel)
BRANDS: tuple[tuple[str, str, bool, bool], ...] = (
    ("Passo Firme", "PF", True, False),
    ("Areia Branca", "AB", True, True),
    ("Ventura", "VT", False, True),
    ("Raiz Carioca", "RC", True, True),
    ("Maré Cheia", "MC", True, True),
    ("Cerrado Urbano", "CU", False, True),
)

MODELS = (
    "Aurora", "Brisa", "Caju", "Duna", "Estrela", "Garoa", "Horizonte", "Ipanema", "Jangada", "Lagoa",
    "Mandacaru", "Noronha", "Orla", "Pampa", "Restinga", "Sabiá", "Tucano", "Urucum", "Vereda", "Xingu",
)  # fmt: skip

COLOURS = (
    ("Preto", "PRT"), ("Branco", "BCO"), ("Off-white", "OFW"), ("Azul-marinho", "AZM"), ("Caramelo", "CRM"),
    ("Vermelho", "VRM"), ("Verde-oliva", "VOL"), ("Cinza", "CNZ"), ("Rosa", "RSA"), ("Bege", "BGE"),
)  # fmt: skip

COLLECTIONS = ("Verão 2026", "Inverno 2026", "Primavera-Verão 2027", "Essenciais")
MAX_PRODUCTS = len(LINES) * len(MODELS) * 2

# Monday .. Sunday: weekends sell the most, early week the least.
WEEKDAY_FACTOR = np.array([0.80, 0.78, 0.85, 0.92, 1.10, 1.55, 1.30])
CAMPAIGN_UPLIFT = 1.6

# Days of cover each kind of store holds (uniform ranges).
COVER_DAYS = {"short": (3.0, 14.0), "balanced": (18.0, 45.0), "over": (70.0, 160.0)}
CD_COVER_DAYS = (15.0, 40.0)
# Chance that a store x product x size is out of stock: short stores lose their best size often.
RUPTURE_CHANCE = {"short": 0.6, "balanced": 0.04, "over": 0.0}

ACCOUNTS: tuple[tuple[str, str, str], ...] = (
    # (local part, name, papel)
    ("admin", "Ana Admin", "admin"),
    ("planejador", "Paulo Planejador", "planejador"),
    ("gerente", "Gabriela Gerente", "gerente_loja"),
    ("visualizador", "Vitor Visualizador", "visualizador"),
)
SUPERADMIN = ("superadmin", "Sofia Superadmin", "admin")


@dataclass
class DemoAccount:
    email: str
    papel: str
    loja: str | None = None
    superadmin: bool = False


@dataclass
class DemoResult:
    stores: int = 0
    cds: int = 0
    products: int = 0
    stock_rows: int = 0
    sales_rows: int = 0
    sales_units: int = 0
    campaign: str = ""
    first_day: date | None = None
    last_day: date | None = None
    accounts: list[DemoAccount] = field(default_factory=list)
    password: str = DEMO_PASSWORD

    def describe(self) -> str:
        lines = [
            f"demo network: {self.cds} CDs, {self.stores} stores, {self.products} products",
            f"  stock: {self.stock_rows:,} store x product x size rows",
            f"  sales: {self.sales_rows:,} rows, {self.sales_units:,} units, "
            f"{self.first_day} .. {self.last_day}",
            f"  campaign: {self.campaign}",
            "",
            describe_accounts(self.accounts, self.password),
        ]
        return "\n".join(lines)


def describe_accounts(accounts: list[DemoAccount], password: str = DEMO_PASSWORD) -> str:
    lines = [f"Demo accounts (password for all: {password}):"]
    for account in accounts:
        extra = f" (loja {account.loja})" if account.loja else ""
        flag = ", superadmin" if account.superadmin else ""
        lines.append(f"  {account.email:<40} {account.papel}{flag}{extra}")
    return "\n".join(lines)


def existing_accounts() -> list[DemoAccount]:
    """The demo accounts present in the database, in the order the demo creates them."""
    emails = [f"{local}@{DEMO_EMAIL_DOMAIN}" for local, _name, _papel in (*ACCOUNTS, SUPERADMIN)]
    users = {u.email: u for u in db.session.scalars(select(User).where(User.email.in_(emails)))}
    return [
        DemoAccount(
            email=u.email,
            papel=u.papel,
            loja=u.loja.codigo if u.loja is not None else None,
            superadmin=u.superadmin,
        )
        for u in (users.get(e) for e in emails)
        if u is not None
    ]


def demo_people() -> dict[str, User]:
    """The demo accounts present in the database, by the local part of their address."""
    emails = {f"{local}@{DEMO_EMAIL_DOMAIN}": local for local, _name, _papel in (*ACCOUNTS, SUPERADMIN)}
    return {emails[u.email]: u for u in db.session.scalars(select(User).where(User.email.in_(list(emails))))}


def store_count() -> int:
    return db.session.scalar(select(func.count()).select_from(Loja)) or 0


def wipe_stock_data() -> None:
    """Delete the stock domain (batches and their history, campaigns, sales, stock, products,
    stores); accounts stay, unlinked from their stores."""
    # Children first: recommendations carry no foreign keys (bulk-written batches), so
    # the order is spelled out rather than derived from the schema.
    doomed = (AcaoRecomendacao, Recomendacao, Lote, Campanha, Venda, Estoque, Produto, Loja)
    db.session.execute(update(User).values(loja_id=None))
    for model in doomed:
        db.session.execute(model.__table__.delete())
    rules = db.session.get(RegrasRemanejamento, 1)
    if rules is not None:
        # Blocked store ids would point at stores that no longer exist; the operations project
        # is named again by the demo once its batches are rebuilt.
        rules.lojas_bloqueadas = []
        rules.projeto_operacoes_id = None
        rules.operacoes_por_id = None
    db.session.flush()


def _size_shares(line: _Line, rng: random.Random) -> np.ndarray:
    """Share of a product's sales per size: a bell around the line's peak, with a little noise."""
    grid = line.grid
    centre = grid.index(line.peak) + rng.uniform(-0.4, 0.4)
    spread = (1.0 if line.apparel else 1.8) * rng.uniform(0.9, 1.15)
    positions = np.arange(len(grid))
    weights = np.exp(-0.5 * ((positions - centre) / spread) ** 2) + 0.02
    return weights / weights.sum()


def _products(n: int, rng: random.Random) -> list[dict]:
    """n products cycling through the lines; each model comes in one or two colours."""
    products = []
    model_index = 0
    index = 0
    while len(products) < n:
        line = LINES[index % len(LINES)]
        index += 1
        brands = [b for b in BRANDS if (b[3] if line.apparel else b[2])]
        marca, brand_code, _shoes, _apparel = brands[rng.randrange(len(brands))]
        model = MODELS[model_index % len(MODELS)]
        model_index += 1
        colecao = COLLECTIONS[rng.randrange(len(COLLECTIONS))]
        colours = rng.sample(COLOURS, 2 if rng.random() < 0.4 else 1)
        for cor, colour_code in colours:
            if len(products) >= n:
                break
            number = len(products) + 1
            products.append(
                {
                    "sku": f"{brand_code}-{line.code}{number:03d}-{colour_code}",
                    "nome": f"{line.stem} {model}",
                    "marca": marca,
                    "categoria": line.categoria,
                    "colecao": colecao,
                    "cor": cor,
                    "line": line,
                    "popularity": rng.lognormvariate(0.0, 0.45),
                    "shares": _size_shares(line, rng),
                }
            )
    return products


def _store_profiles(n: int, rng: random.Random) -> list[str]:
    """About a third of stores short, a third over-stocked; at least one of each when n allows."""
    profiles = ["short", "over", "balanced"] * (n // 3 + 1)
    profiles = profiles[:n]
    rng.shuffle(profiles)
    return profiles


def load(
    *, n_stores: int = DEFAULT_STORES, n_products: int = DEFAULT_PRODUCTS, seed: int = DEFAULT_SEED
) -> DemoResult:
    """Build the network into an empty stock domain; flushes, never commits."""
    if not 1 <= n_stores <= MAX_STORES:
        raise ValueError(f"n_stores must be between 1 and {MAX_STORES}")
    if not 1 <= n_products <= MAX_PRODUCTS:
        raise ValueError(f"n_products must be between 1 and {MAX_PRODUCTS}")
    # Both generators are drawn from in a fixed order (stores, products, demand, sales,
    # stock): the same seed gives the same network.
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    ref = today()
    result = DemoResult(cds=len(CDS), stores=n_stores, products=n_products)
    stores = _import_stores(n_stores)
    products = _products(n_products, rng)
    _import_products(products)

    product_rate = np.array([p["line"].daily * p["popularity"] for p in products])
    demand = _demand(stores, products, product_rate, nrng)
    # The campaign: the best seller, at every store, started ten days ago.
    hero = int(np.argmax(product_rate))
    campaign = (ref - timedelta(days=10), ref + timedelta(days=20))
    _import_sales(stores, products, demand, hero, campaign, ref, nrng, result)
    stock_rows = _stock_rows(stores, products, demand, _store_profiles(n_stores, rng), nrng)
    result.stock_rows = importer.import_rows("stock", stock_rows).inserted

    hero_sku = products[hero]["sku"]
    importer.import_rows("campaigns", [[hero_sku, "", campaign[0].isoformat(), campaign[1].isoformat()]])
    result.campaign = f"{hero_sku} ({products[hero]['nome']}) at every store, {campaign[0]} .. {campaign[1]}"

    gerente_loja = db.session.scalar(select(Loja).where(Loja.codigo == stores[0][0]))
    result.accounts = _accounts(gerente_loja)
    return result


def _import_stores(n_stores: int) -> list[tuple]:
    """Import the CDs and the first ``n_stores`` stores; the stores as (codigo, nome, ..., factor)."""
    stores = [(f"LJ{i + 1:03d}", *STORES[i]) for i in range(n_stores)]
    store_rows = [[c, n, cidade, f"{lat}", f"{lng}", "true", "false"] for c, n, cidade, lat, lng in CDS]
    store_rows += [
        [codigo, f"{cidade.split(' - ')[0]} {nome}", cidade, f"{lat}", f"{lng}", "false", "false"]
        for codigo, nome, cidade, lat, lng, _factor in stores
    ]
    importer.import_rows("stores", store_rows)
    return stores


def _import_products(products: list[dict]) -> None:
    importer.import_rows(
        "products",
        (
            [
                p["sku"],
                p["nome"],
                p["marca"],
                p["categoria"],
                p["colecao"],
                p["cor"],
                "|".join(p["line"].grid),
                "",
            ]
            for p in products
        ),
    )


def _demand(
    stores: list[tuple], products: list[dict], product_rate: np.ndarray, nrng: np.random.Generator
) -> np.ndarray:
    """Expected daily demand per store x product x size (sizes padded to the longest run)."""
    width = max(len(p["line"].grid) for p in products)
    store_factor = np.array([s[5] for s in stores]) * nrng.lognormal(0.0, 0.12, len(stores))
    shares = np.zeros((len(products), width))
    for j, p in enumerate(products):
        shares[j, : len(p["shares"])] = p["shares"]
    return store_factor[:, None, None] * product_rate[None, :, None] * shares[None, :, :]


def _import_sales(
    stores: list[tuple],
    products: list[dict],
    demand: np.ndarray,
    hero: int,
    campaign: tuple[date, date],
    ref: date,
    nrng: np.random.Generator,
    result: DemoResult,
) -> None:
    """90 days of Poisson sales before ``ref``; the hero product sells more during its campaign."""
    days = [ref - timedelta(days=SALES_DAYS - k) for k in range(SALES_DAYS)]
    day_factor = np.array([WEEKDAY_FACTOR[d.weekday()] for d in days])
    in_campaign = np.array([campaign[0] <= d <= campaign[1] for d in days])
    lam = demand[:, :, :, None] * day_factor[None, None, None, :]
    lam[:, hero, :, in_campaign] *= CAMPAIGN_UPLIFT
    sold = nrng.poisson(lam)
    s_idx, p_idx, z_idx, d_idx = np.nonzero(sold)
    day_text = [d.isoformat() for d in days]
    codes = [s[0] for s in stores]
    sales_rows = (
        [day_text[d], codes[s], products[p]["sku"], products[p]["line"].grid[z], str(int(sold[s, p, z, d]))]
        for s, p, z, d in zip(s_idx.tolist(), p_idx.tolist(), z_idx.tolist(), d_idx.tolist(), strict=True)
    )
    result.sales_rows = importer.import_rows("sales", sales_rows).inserted
    result.sales_units = int(sold.sum())
    result.first_day, result.last_day = days[0], days[-1]


def _stock_rows(
    stores: list[tuple],
    products: list[dict],
    demand: np.ndarray,
    profiles: list[str],
    nrng: np.random.Generator,
) -> list[list[str]]:
    """Stock: cover drawn per store profile; short stores also run out of their best sizes."""
    stock_rows: list[list[str]] = []
    for s, (codigo, *_rest) in enumerate(stores):
        low, high = COVER_DAYS[profiles[s]]
        for j, p in enumerate(products):
            grid = p["line"].grid
            best = int(np.argmax(p["shares"]))
            for z, tamanho in enumerate(grid):
                cover = nrng.uniform(low, high)
                # Short stores run out of the size that sells most; others anywhere, rarely.
                chance = 0.0 if profiles[s] == "short" and z != best else RUPTURE_CHANCE[profiles[s]]
                if nrng.random() < chance:
                    cover = 0.0
                qtd = round(demand[s, j, z] * cover)
                stock_rows.append([codigo, p["sku"], tamanho, str(qtd)])
    network = demand.sum(axis=0)
    cd_split = (0.6, 0.4)
    for c, (codigo, *_rest) in enumerate(CDS):
        for j, p in enumerate(products):
            for z, tamanho in enumerate(p["line"].grid):
                # A few items are out at the CDs too: the stores must rebalance among themselves.
                cover = 0.0 if nrng.random() < 0.08 else nrng.uniform(*CD_COVER_DAYS)
                qtd = round(network[j, z] * cover * cd_split[c % 2])
                stock_rows.append([codigo, p["sku"], tamanho, str(qtd)])
    return stock_rows


def _accounts(loja: Loja) -> list[DemoAccount]:
    """One account per papel plus a superadmin; existing demo accounts are reset to the demo password."""
    accounts = []
    for local, name, papel in (*ACCOUNTS, SUPERADMIN):
        email = f"{local}@{DEMO_EMAIL_DOMAIN}"
        is_super = local == SUPERADMIN[0]
        loja_id = loja.id if papel == "gerente_loja" else None
        user = auth_service.find_user_by_email(email)
        if user is None:
            auth_service.create_user(
                email=email,
                password=DEMO_PASSWORD,
                name=name,
                papel=papel,
                loja_id=loja_id,
                superadmin=is_super,
            )
        else:
            user.name, user.papel, user.loja_id, user.superadmin = name, papel, loja_id, is_super
            user.banned = False
            user.password_hash = auth_service.hash_password(DEMO_PASSWORD)
        accounts.append(
            DemoAccount(email=email, papel=papel, loja=loja.codigo if loja_id else None, superadmin=is_super)
        )
    db.session.flush()
    return accounts
