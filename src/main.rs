fn main() {
    println!("caro-arena: the server arrives with issue 3");
}
