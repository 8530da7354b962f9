"""The demo question bank: 120 original multiple-choice questions.

Written for this project (not taken from MMLU, MMLU-Pro, ARC, GSM8k or any
other benchmark): 5 subjects x 3 human difficulty levels x 8 questions, each
with 4 options and one correct letter.

Levels
------
1
    Easy: everyday or school knowledge, one step.
2
    Medium: first- or second-year undergraduate material.
3
    Hard: several steps, a trap, or specialist knowledge.

:mod:`annotate.demo.generate` is the only consumer; it numbers the
questions ``100 * (subject position + 1) + (position in subject + 1)`` in the
order written here (math 101-124, physics 201-224, biology 301-324, computer
science 401-424, history 501-524), so do not reorder entries without
regenerating the CSVs.
"""
from __future__ import annotations

from dataclasses import dataclass

SUBJECTS = ("math", "physics", "biology", "computer science", "history")
LEVELS = (1, 2, 3)
LETTERS = "ABCD"


@dataclass(frozen=True)
class DemoQuestion:
    """One demo question.

    Attributes
    ----------
    subject : str
        One of :data:`SUBJECTS`; written to the ``category`` column.
    level : int
        Human difficulty label, 1 (easy), 2 (medium) or 3 (hard).
    text : str
        The question as shown to evaluators.
    options : tuple of str
        Exactly four options, in display order A-D.
    answer : str
        The correct letter, one of "A", "B", "C", "D".
    """

    subject: str
    level: int
    text: str
    options: tuple[str, str, str, str]
    answer: str


def _bank(subject: str, rows: list[tuple[int, str, list[str], str]]) -> list[DemoQuestion]:
    return [DemoQuestion(subject, level, text, tuple(options), answer) for level, text, options, answer in rows]


_MATH = [
    # Level 1
    (1, "What is 15% of 80?", ["8", "12", "15", "20"], "B"),
    (1, "A rectangle is 7 cm long and 4 cm wide. What is its perimeter?",
     ["11 cm", "14 cm", "22 cm", "28 cm"], "C"),
    (1, "What is the value of 3 + 4 × 2?", ["14", "9", "10", "11"], "D"),
    (1, "Which of these numbers is prime?", ["29", "21", "27", "33"], "A"),
    (1, "What is 2/3 + 1/6?", ["3/9", "1/2", "5/6", "3/6"], "C"),
    (1, "A bus leaves at 9:45 and the trip takes 1 hour 35 minutes. At what time does it arrive?",
     ["11:10", "11:20", "11:30", "10:20"], "B"),
    (1, "Solve for x: 5x − 7 = 18.", ["5", "4", "6", "11/5"], "A"),
    (1, "What is the area of a triangle with a base of 10 m and a height of 6 m?",
     ["60 m²", "16 m²", "32 m²", "30 m²"], "D"),
    # Level 2
    (2, "What is the derivative of f(x) = x² · sin(x)?",
     ["2x · cos(x)", "2x · sin(x) + x² · cos(x)", "2x · sin(x) − x² · cos(x)", "x² · cos(x)"], "B"),
    (2, "What is the value of the integral of x · eˣ from x = 0 to x = 1?",
     ["e − 1", "e − 2", "1", "(e + 1)/2"], "C"),
    (2, "What is the determinant of the 2×2 matrix with rows (2, 1) and (5, 3)?",
     ["1", "11", "−1", "6"], "A"),
    (2, "In how many ways can a committee of 3 people be chosen from 8 people?",
     ["24", "336", "512", "56"], "D"),
    (2, "Two fair six-sided dice are rolled. What is the probability that the two numbers add up to 7?",
     ["1/12", "1/6", "7/36", "1/9"], "B"),
    (2, "What is the sum of the infinite geometric series 1 + 1/3 + 1/9 + 1/27 + …?",
     ["4/3", "2", "3/2", "3"], "C"),
    (2, "What is the limit of (1 − cos x)/x² as x approaches 0?",
     ["1/2", "0", "1", "It does not exist"], "A"),
    (2, "What are the eigenvalues of the 2×2 matrix with rows (4, 1) and (2, 3)?",
     ["1 and 6", "3 and 4", "−2 and −5", "2 and 5"], "D"),
    # Level 3
    (3, "How many positive integers less than 1000 are divisible by neither 5 nor 7?",
     ["658", "686", "700", "714"], "B"),
    (3, "What is the remainder when 7¹⁰⁰ is divided by 13?", ["1", "3", "9", "12"], "C"),
    (3, "A necklace has 6 beads, each black or white. Two necklaces count as the same if one is a "
        "rotation of the other (flipping it over is not allowed). How many different necklaces are there?",
     ["14", "10", "13", "20"], "A"),
    (3, "What is the exact value of the infinite sum of 1/(n(n + 2)) for n = 1, 2, 3, …?",
     ["1/2", "1", "π²/12", "3/4"], "D"),
    (3, "A fair coin is tossed until two heads in a row appear. What is the expected number of tosses?",
     ["4", "6", "5", "8"], "B"),
    (3, "How many elements of order 2 does the symmetric group S₄ (all permutations of 4 objects) contain?",
     ["6", "3", "9", "12"], "C"),
    (3, "What is the smallest positive integer n with n ≡ 2 (mod 3), n ≡ 3 (mod 5) and n ≡ 2 (mod 7)?",
     ["23", "38", "53", "68"], "A"),
    (3, "A real 3×3 matrix A satisfies A² = A and its trace is 2. What is the rank of A?",
     ["0", "1", "3", "2"], "D"),
]

_PHYSICS = [
    # Level 1
    (1, "What is the SI unit of force?", ["joule", "newton", "watt", "pascal"], "B"),
    (1, "A car travels 150 km in 2 hours at a steady speed. What is its speed?",
     ["75 km/h", "50 km/h", "300 km/h", "152 km/h"], "A"),
    (1, "Which of these materials conducts electricity best?", ["glass", "rubber", "copper", "dry wood"], "C"),
    (1, "At sea level, at what temperature does pure water boil?", ["90 °C", "110 °C", "212 °C", "100 °C"], "D"),
    (1, "Why do we see a lightning flash before we hear the thunder it causes?",
     ["Thunder is produced after the flash ends", "Light travels much faster than sound",
      "Rain slows the sound down", "Eyes react faster than ears"], "B"),
    (1, "What kind of energy does a stretched rubber band mainly store?",
     ["thermal energy", "chemical energy", "nuclear energy", "elastic potential energy"], "D"),
    (1, "Two bar magnets are held with their north poles facing each other. What happens?",
     ["They push each other away", "They pull towards each other", "Nothing happens",
      "Both magnets lose their magnetism"], "A"),
    (1, "An object has a mass of 10 kg on Earth. What is its mass on the Moon?",
     ["about 1.6 kg", "about 60 kg", "10 kg", "0 kg"], "C"),
    # Level 2
    (2, "A ball is thrown straight up at 20 m/s. Ignoring air resistance and taking g = 10 m/s², "
        "how high does it rise above the launch point?", ["10 m", "40 m", "2 m", "20 m"], "D"),
    (2, "What is the equivalent resistance of a 6 Ω resistor and a 3 Ω resistor connected in parallel?",
     ["2 Ω", "4.5 Ω", "9 Ω", "18 Ω"], "A"),
    (2, "A simple pendulum has period T. If its length is made four times longer, what is its new period?",
     ["4T", "2T", "T/2", "√2 · T"], "B"),
    (2, "An ideal gas kept at constant pressure is heated from 300 K to 450 K. By what factor does its volume change?",
     ["2/3", "2.25", "1.5", "1 (it does not change)"], "C"),
    (2, "A photon has a wavelength of 500 nm. Using hc ≈ 1240 eV·nm, what is its energy?",
     ["0.40 eV", "2.48 eV", "6.2 eV", "24.8 eV"], "B"),
    (2, "A satellite moves from one circular orbit to another with twice the radius. "
        "By what factor does its orbital speed change?", ["1/2", "√2", "2", "1/√2"], "D"),
    (2, "Two carts collide on a frictionless track and stick together. Which quantity is conserved?",
     ["total momentum only", "total kinetic energy only", "both momentum and kinetic energy",
      "neither momentum nor kinetic energy"], "A"),
    (2, "A Carnot engine works between reservoirs at 600 K and 300 K. What is its maximum efficiency?",
     ["25%", "67%", "50%", "100%"], "C"),
    # Level 3
    (3, "A particle is in the ground state of a one-dimensional infinite square well of width L. "
        "The well is suddenly widened to 2L (one wall moves, the wavefunction has no time to change). "
        "What is the probability that a measurement finds the particle in the new ground state?",
     ["0.25", "0.50", "0.36", "0.81"], "C"),
    (3, "A thin uniform rod of length L, pivoted at one end, is released from rest in a horizontal position. "
        "What is its angular acceleration just after release?", ["3g/(2L)", "g/L", "2g/(3L)", "3g/L"], "A"),
    (3, "Two identical, non-interacting spin-1/2 fermions are placed in a one-dimensional harmonic "
        "oscillator with angular frequency ω. What is the lowest possible total energy?",
     ["ħω/2", "2ħω", "3ħω", "ħω"], "D"),
    (3, "A particle's total energy is twice its rest energy. What is its speed?",
     ["0.500c", "0.866c", "0.707c", "0.943c"], "B"),
    (3, "A series RLC circuit has R = 10 Ω, L = 10 mH and C = 1 μF. What is its quality factor Q?",
     ["1", "0.1", "10", "100"], "C"),
    (3, "One mole of an ideal gas expands freely into a vacuum (no work, no heat exchanged) until its volume "
        "doubles. What is the entropy change of the gas?",
     ["0, because no heat flows", "−R ln 2 ≈ −5.8 J/K", "2R ≈ 16.6 J/K", "R ln 2 ≈ +5.8 J/K"], "D"),
    (3, "A long solenoid with n turns per metre carries a current I(t) = I₀ sin(ωt). What is the amplitude of "
        "the induced electric field at a distance r from the axis, inside the solenoid?",
     ["μ₀ n I₀ ω r / 2", "μ₀ n I₀ ω r", "μ₀ n I₀ ω / (2r)", "0, the field inside is purely magnetic"], "A"),
    (3, "A thin oil film (refractive index 1.5) floats on water (refractive index 1.33). Viewed from above at "
        "normal incidence it reflects 600 nm light most strongly. What is the smallest possible film thickness?",
     ["200 nm", "100 nm", "150 nm", "300 nm"], "B"),
]

_BIOLOGY = [
    # Level 1
    (1, "Which organ pumps blood around the human body?", ["the liver", "the lungs", "the heart", "the kidneys"], "C"),
    (1, "Which gas do plants take in from the air to make their food?",
     ["carbon dioxide", "oxygen", "nitrogen", "hydrogen"], "A"),
    (1, "How many legs does an insect have?", ["4", "8", "10", "6"], "D"),
    (1, "Which of these animals is a mammal?", ["a shark", "a whale", "a salmon", "an octopus"], "B"),
    (1, "What do bees collect from flowers to make honey?", ["sap", "water", "nectar", "seeds"], "C"),
    (1, "Which part of a plant usually takes up water from the soil?",
     ["the roots", "the leaves", "the flowers", "the fruit"], "A"),
    (1, "What is the largest organ of the human body?", ["the brain", "the liver", "the lungs", "the skin"], "D"),
    (1, "Tadpoles grow up to become which animals?", ["lizards", "frogs", "snakes", "turtles"], "B"),
    # Level 2
    (2, "Where in a eukaryotic cell does the citric acid (Krebs) cycle take place?",
     ["the mitochondrial matrix", "the cytoplasm", "the inner mitochondrial membrane", "the nucleus"], "A"),
    (2, "During which phase of mitosis do sister chromatids separate and move to opposite poles of the cell?",
     ["prophase", "metaphase", "anaphase", "telophase"], "C"),
    (2, "A DNA strand reads 5'-ATGC-3'. What is its complementary strand, written 5' to 3'?",
     ["5'-TACG-3'", "5'-GCAT-3'", "5'-CGTA-3'", "5'-ATGC-3'"], "B"),
    (2, "Two pea plants that are both heterozygous for height (Tt, tall dominant) are crossed. "
        "What fraction of their offspring is expected to be short?", ["0", "1/2", "3/4", "1/4"], "D"),
    (2, "Which molecule brings amino acids to the ribosome during translation?",
     ["mRNA", "tRNA", "rRNA", "DNA polymerase"], "B"),
    (2, "Which blood vessels carry oxygen-poor blood from the heart to the lungs?",
     ["the pulmonary arteries", "the pulmonary veins", "the aorta", "the venae cavae"], "A"),
    (2, "Which cells produce antibodies?", ["helper T cells", "neutrophils", "red blood cells", "plasma cells"], "D"),
    (2, "In a population in Hardy–Weinberg equilibrium, the recessive allele has frequency 0.3. "
        "What fraction of individuals are heterozygous?", ["0.09", "0.21", "0.42", "0.49"], "C"),
    # Level 3
    (3, "Pure-breeding AABB plants are crossed with aabb plants, and the F1 is test-crossed to aabb. The two genes "
        "are linked and 20% of the test-cross offspring are recombinant. What fraction of the offspring is Aabb?",
     ["0.05", "0.10", "0.20", "0.40"], "B"),
    (3, "An enzyme follows Michaelis–Menten kinetics with Km = 2 mM. At what substrate concentration does the "
        "reaction rate reach 80% of Vmax?", ["1.6 mM", "4 mM", "10 mM", "8 mM"], "D"),
    (3, "A competitive inhibitor is added to an enzyme reaction. How do the apparent Km and Vmax change?",
     ["Km increases, Vmax is unchanged", "Km is unchanged, Vmax decreases", "both decrease",
      "Km decreases, Vmax increases"], "A"),
    (3, "In E. coli, how does the presence of lactose switch on the lac operon?",
     ["Lactose binds RNA polymerase directly and speeds it up",
      "Glucose binds the repressor and activates it",
      "Allolactose binds the lac repressor, which then releases the operator",
      "cAMP levels fall, which activates the CAP protein"], "C"),
    (3, "At 37 °C a cell has 140 mM K⁺ inside and 5 mM K⁺ outside. What is the approximate Nernst "
        "equilibrium potential for K⁺ (inside relative to outside)?", ["+89 mV", "−89 mV", "−61 mV", "−35 mV"], "B"),
    (3, "A point mutation changes the codon UAC to UAA in the coding region of an mRNA. What kind of mutation is this?",
     ["a nonsense mutation", "a missense mutation", "a silent mutation", "a frameshift mutation"], "A"),
    (3, "In the mesophyll cells of C4 plants, which enzyme fixes inorganic carbon into a four-carbon acid?",
     ["Rubisco", "ATP synthase", "pyruvate kinase", "PEP carboxylase"], "D"),
    (3, "An unaffected woman's father had an X-linked recessive disease. She has children with an unaffected man. "
        "What is the probability that their first child is an affected son?", ["1/2", "1/8", "1/4", "0"], "C"),
]

_COMPUTER_SCIENCE = [
    # Level 1
    (1, "What does CPU stand for?",
     ["Computer Personal Unit", "Central Processing Unit", "Central Program Utility", "Core Power Unit"], "B"),
    (1, "How many bits are there in a byte?", ["8", "4", "10", "16"], "A"),
    (1, "Which of these programs is a web browser?", ["Excel", "Photoshop", "Firefox", "Notepad"], "C"),
    (1, "What is the binary number 101 in decimal?", ["3", "6", "101", "5"], "D"),
    (1, "On Windows, which key combination usually copies the selected text?",
     ["Ctrl+V", "Ctrl+C", "Ctrl+X", "Ctrl+Z"], "B"),
    (1, "What kind of device is a keyboard?",
     ["an input device", "an output device", "a storage device", "a network device"], "A"),
    (1, "Each photo in an album is 3 MB. Roughly how many such photos fit on a 3 GB memory card?",
     ["about 10", "about 100", "about 1,000,000", "about 1,000"], "D"),
    (1, "In a spreadsheet, what does the formula =SUM(A1:A3) calculate?",
     ["the average of A1 to A3", "A1 plus A3 only", "the total of cells A1, A2 and A3",
      "how many cells are filled"], "C"),
    # Level 2
    (2, "What is the worst-case time complexity of binary search in a sorted array of n elements?",
     ["O(log n)", "O(n)", "O(1)", "O(n log n)"], "A"),
    (2, "Which data structure returns items in first-in, first-out (FIFO) order?",
     ["a stack", "a queue", "a binary heap", "a hash set"], "B"),
    (2, "What is the 8-bit two's complement representation of −5?",
     ["10000101", "11111010", "11111011", "00000101"], "C"),
    (2, "Which of these sorting algorithms runs in O(n log n) time in the worst case?",
     ["quicksort", "insertion sort", "bubble sort", "merge sort"], "D"),
    (2, "In SQL, which clause filters groups after aggregation?", ["WHERE", "HAVING", "ORDER BY", "GROUP BY"], "B"),
    (2, "What does the Python expression len({1, 2, 2, 3, 3, 3}) evaluate to?", ["3", "6", "4", "1"], "A"),
    (2, "How many edges does a tree with 10 vertices have?", ["10", "11", "45", "9"], "D"),
    (2, "A hash table with separate chaining has 1,000 buckets and holds 3,000 keys spread uniformly. "
        "What is the expected length of a chain?", ["1", "30", "3", "1,000"], "C"),
    # Level 3
    (3, "What is the solution of the recurrence T(n) = 2T(n/2) + n log n?",
     ["Θ(n log n)", "Θ(n log² n)", "Θ(n²)", "Θ(n)"], "B"),
    (3, "How many structurally different binary search trees can hold the keys 1, 2, 3 and 4?",
     ["24", "16", "10", "14"], "D"),
    (3, "Which of these problems is decidable?",
     ["whether a given deterministic finite automaton accepts at least one string",
      "whether a given Turing machine halts on a given input",
      "whether two context-free grammars generate the same language",
      "whether a given Turing machine accepts the empty string"], "A"),
    (3, "What is the running time of Dijkstra's algorithm with a binary heap on a graph with V vertices and "
        "E edges?", ["O(V · E)", "O(V + E)", "O((V + E) log V)", "O(V³)"], "C"),
    (3, "According to the CAP theorem, during a network partition a distributed data store must give up one of:",
     ["latency or throughput", "consistency or availability", "durability or isolation",
      "partition tolerance or durability"], "B"),
    (3, "A direct-mapped cache has 64 lines of 16 bytes each, and addresses are 32 bits long. "
        "How many bits of each address form the tag?", ["26", "20", "16", "22"], "D"),
    (3, "What does this Python code print?  x = [1, 2, 3]; y = x; y += [4]; print(len(x))",
     ["4", "3", "7", "nothing; it raises an error"], "A"),
    (3, "What is the smallest number of comparisons that suffices, in the worst case, to sort any 5 distinct "
        "elements with a comparison sort?", ["6", "8", "7", "10"], "C"),
]

_HISTORY = [
    # Level 1
    (1, "Who was the first President of the United States?",
     ["Abraham Lincoln", "Thomas Jefferson", "John Adams", "George Washington"], "D"),
    (1, "In which country are the pyramids of Giza?", ["Egypt", "Mexico", "Greece", "Peru"], "A"),
    (1, "Which war ended in 1945?", ["World War I", "World War II", "the Korean War", "the Vietnam War"], "B"),
    (1, "In what year did people first land on the Moon?", ["1959", "1975", "1969", "1981"], "C"),
    (1, "The Great Wall was built mainly to protect which country?", ["Japan", "China", "India", "Korea"], "B"),
    (1, "Which Roman town was buried by the eruption of Mount Vesuvius in 79 AD?",
     ["Pompeii", "Athens", "Carthage", "Troy"], "A"),
    (1, "Which civilisation built Machu Picchu?", ["the Aztecs", "the Maya", "the Olmecs", "the Inca"], "D"),
    (1, "Which city was divided by a wall that fell in 1989?", ["Vienna", "Warsaw", "Berlin", "Prague"], "C"),
    # Level 2
    (2, "The Peace of Westphalia (1648) ended which war?",
     ["the Thirty Years' War", "the Hundred Years' War", "the War of the Spanish Succession",
      "the Seven Years' War"], "A"),
    (2, "Which dynasty ruled China when the Forbidden City in Beijing was built?",
     ["Qing", "Tang", "Ming", "Han"], "C"),
    (2, "In which country did the Meiji Restoration of 1868 take place?", ["China", "Japan", "Korea", "Thailand"], "B"),
    (2, "Who wrote The Communist Manifesto together with Karl Marx?",
     ["Vladimir Lenin", "Leon Trotsky", "Pierre-Joseph Proudhon", "Friedrich Engels"], "D"),
    (2, "Which event in 1914 set off the First World War?",
     ["the sinking of the Lusitania", "the assassination of Archduke Franz Ferdinand in Sarajevo",
      "the German invasion of Poland", "the Zimmermann Telegram"], "B"),
    (2, "Which English king agreed to the Magna Carta in 1215?",
     ["King John", "Henry VIII", "Richard I", "Edward I"], "A"),
    (2, "Which empire ruled from Constantinople for most of the period from 500 to 1400 AD?",
     ["the Ottoman Empire", "the Holy Roman Empire", "the Sasanian Empire", "the Byzantine Empire"], "D"),
    (2, "In which year did the British Parliament abolish the slave trade (though not yet slavery) in its empire?",
     ["1776", "1833", "1807", "1865"], "C"),
    # Level 3
    (3, "Which 1494 treaty divided newly reached lands outside Europe between Portugal and Castile?",
     ["the Treaty of Utrecht", "the Treaty of Tordesillas", "the Treaty of Zaragoza", "the Treaty of Paris"], "B"),
    (3, "The Taiping Rebellion (1850–1864) was led by a man who claimed to be the younger brother of Jesus. "
        "Who was he?",
     ["Hong Xiuquan", "Sun Yat-sen", "Li Hongzhang", "Zeng Guofan"], "A"),
    (3, "Which ruler of the Mali Empire made a famous pilgrimage to Mecca in 1324?",
     ["Sundiata Keita", "Askia Muhammad", "Sonni Ali", "Mansa Musa"], "D"),
    (3, "Which Austrian statesman chiefly steered the Congress of Vienna (1814–1815)?",
     ["Charles-Maurice de Talleyrand", "Otto von Bismarck", "Klemens von Metternich", "Viscount Castlereagh"], "C"),
    (3, "What was the main purpose of the Edict of Nantes (1598)?",
     ["to expel the Jews from France", "to grant the Huguenots (French Protestants) religious and civil rights",
      "to found the Jesuit order", "to end the Hundred Years' War"], "B"),
    (3, "Who replaced James II on the English throne in the Glorious Revolution of 1688–1689?",
     ["Charles II", "Oliver Cromwell", "William III and Mary II", "George I"], "C"),
    (3, "The secret Sykes–Picot Agreement of 1916 was made between which two powers?",
     ["Britain and France", "Germany and the Ottoman Empire", "Russia and Japan", "Italy and Austria-Hungary"], "A"),
    (3, "Which Byzantine emperor ordered the codification of Roman law known as the Corpus Juris Civilis?",
     ["Constantine I", "Heraclius", "Basil II", "Justinian I"], "D"),
]

QUESTIONS: tuple[DemoQuestion, ...] = tuple(
    _bank("math", _MATH)
    + _bank("physics", _PHYSICS)
    + _bank("biology", _BIOLOGY)
    + _bank("computer science", _COMPUTER_SCIENCE)
    + _bank("history", _HISTORY)
)
"""All 120 questions, grouped by subject in :data:`SUBJECTS` order, then by level."""
